// Which side of the detector's evaluation a document is on: scripts/detector_split.py's rule,
// the same function (SHA-256 of the salted key, first four bytes big-endian, mod 100), so the
// eval reports held-out figures on exactly the documents the training script never read.

import { createHash } from 'node:crypto'

export const SALT = 'openclaw-detector-split-v1'
export const HELDOUT_PERCENT = 30
export const CALIB_PERCENT = 20

export function bucket(key) {
  return createHash('sha256').update(`${SALT}:${key}`, 'utf8').digest().readUInt32BE(0) % 100
}

/** 'heldout', 'calib' or 'train'. */
export function side(key) {
  const b = bucket(key)
  if (b < HELDOUT_PERCENT) return 'heldout'
  if (b < HELDOUT_PERCENT + CALIB_PERCENT) return 'calib'
  return 'train'
}
