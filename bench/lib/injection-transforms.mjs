// How an attacker hides an instruction from a naive (regex over the raw text) detector while a
// model still reads it. Each transform is a pure, deterministic function of the string (any
// rotation restarts at every call; no Math.random), used by bench/detector-eval.mjs to score
// each detector's recall on the same attacks, disguised:
//   none        the text as is;
//   zeroWidth   a zero-width character (U+200B, U+200C, U+200D, U+2060, U+FEFF in turn) after
//               the 2nd letter of every word longer than 3 letters;
//   fullwidth   ASCII letters and digits as their fullwidth forms (U+FF21.., U+FF41.., U+FF10..);
//   tagChars    a short benign sentence followed by the whole instruction as Unicode tag
//               characters (U+E0000 + code point; whitespace runs become one space, anything
//               outside ASCII 0x20..0x7E is dropped): invisible in most renderings, read by models;
//   homoglyphs  every Latin letter that has a Cyrillic or Greek look-alike replaced by it.

const ZERO_WIDTH = ['\u200B', '\u200C', '\u200D', '\u2060', '\uFEFF']

/** Identity. */
export const none = (s) => s

/** A zero-width character (rotating) inside every word longer than 3 letters. */
export function zeroWidth(s) {
  let n = 0
  return s.replace(/\p{L}{4,}/gu, (word) => {
    const cps = [...word]
    return cps.slice(0, 2).join('') + ZERO_WIDTH[n++ % ZERO_WIDTH.length] + cps.slice(2).join('')
  })
}

/** ASCII letters and digits → fullwidth forms (U+FF01..U+FF5E is ASCII 0x21..0x7E + 0xFEE0). */
export function fullwidth(s) {
  return s.replace(/[A-Za-z0-9]/g, (c) => String.fromCodePoint(c.codePointAt(0) + 0xfee0))
}

/** The benign sentence tagChars puts in front of the hidden instruction. */
export const TAG_COVER = 'Here is the weather report.'

/** The instruction as Unicode tag characters, after a short benign sentence. */
export function tagChars(s) {
  let tags = ''
  for (const ch of s.replace(/\s+/g, ' ').trim()) {
    const cp = ch.codePointAt(0)
    // Only printable ASCII has tag forms; anything else (an attack already in tags, an
    // accented letter) stays as it is rather than being dropped with what it carries.
    tags += cp >= 0x20 && cp <= 0x7e ? String.fromCodePoint(0xe0000 + cp) : ch
  }
  return `${TAG_COVER} ${tags}`
}

// Latin letter → look-alikes (Cyrillic first, then Greek/other scripts); several are used in turn.
const HOMOGLYPHS = {
  a: ['\u0430'], // а
  c: ['\u0441'], // с
  d: ['\u0501'], // ԁ
  e: ['\u0435'], // е
  h: ['\u04BB'], // һ
  i: ['\u0456', '\u03B9'], // і ι
  j: ['\u0458'], // ј
  l: ['\u04CF'], // ӏ
  o: ['\u043E', '\u03BF'], // о ο
  p: ['\u0440'], // р
  q: ['\u051B'], // ԛ
  s: ['\u0455'], // ѕ
  v: ['\u03BD'], // ν
  w: ['\u051D'], // ԝ
  x: ['\u0445'], // х
  y: ['\u0443'], // у
  A: ['\u0410', '\u0391'], // А Α
  B: ['\u0412', '\u0392'], // В Β
  C: ['\u0421'], // С
  E: ['\u0415', '\u0395'], // Е Ε
  H: ['\u041D', '\u0397'], // Н Η
  I: ['\u0406', '\u0399'], // І Ι
  J: ['\u0408'], // Ј
  K: ['\u041A', '\u039A'], // К Κ
  M: ['\u041C', '\u039C'], // М Μ
  N: ['\u039D'], // Ν
  O: ['\u041E', '\u039F'], // О Ο
  P: ['\u0420', '\u03A1'], // Р Ρ
  S: ['\u0405'], // Ѕ
  T: ['\u0422', '\u03A4'], // Т Τ
  X: ['\u0425', '\u03A7'], // Х Χ
  Y: ['\u04AE', '\u03A5'], // Ү Υ
  Z: ['\u0396'], // Ζ
}

/** Every Latin letter that has a look-alike replaced by one (alternatives in turn). */
export function homoglyphs(s) {
  const used = {}
  return s.replace(/[A-Za-z]/g, (c) => {
    const alts = HOMOGLYPHS[c]
    if (!alts) return c
    const k = used[c] ?? 0
    used[c] = k + 1
    return alts[k % alts.length]
  })
}

export const TRANSFORMS = { none, zeroWidth, fullwidth, tagChars, homoglyphs }
