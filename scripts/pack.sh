#!/usr/bin/env bash
# Builds the addon for this machine's target with the `dist` profile (what is published; see
# Cargo.toml) and packs what npm would publish:
# the root package (loader, types, CLI, example server; no binary) and the platform package
# (the binary only), into dist/. Prints each tarball's file list and size.
#
#   scripts/pack.sh                dist build (fat LTO, one codegen unit, stripped), then pack
#   scripts/pack.sh --build-only   the dist build alone (.ci/run starts it in the background)
#   SKIP_BUILD=1 scripts/pack.sh   reuse target/pack/native
set -euo pipefail
cd "$(dirname "$0")/.."

build_only=
case ${1:-} in
  --build-only) build_only=1 ;;
  '') ;;
  *) echo "pack.sh: unknown argument '$1' (only --build-only)" >&2; exit 2 ;;
esac

host=$(rustc -vV | sed -n 's/^host: //p')
native=target/pack/native
if [ -n "$build_only" ] || [ -z "${SKIP_BUILD:-}" ] || [ ! -d "$native" ]; then
  npx napi build --platform --profile dist --target "$host" --output-dir "$native" --js binding.js --dts binding.d.ts
fi
[ -z "$build_only" ] || exit 0

binary=$(ls "$native"/*.node)
# A binary marked STATIC_TLS (thread-locals in the initial-exec model, as mimalloc once was) loads
# once per process: glibc has no static TLS left for a second copy ("cannot allocate memory in
# static TLS block"), and OpenClaw loads a plugin's dependencies a second time.
if [ "$(uname -s)" = Linux ] && readelf -d "$binary" | grep -q 'STATIC_TLS'; then
  echo "pack: $binary is marked STATIC_TLS (readelf -d); it could not be loaded twice into one process" >&2
  exit 1
fi
platform=$(basename "$binary" .node)      # mcp-native.linux-x64-gnu
platform=${platform#mcp-native.}          # linux-x64-gnu
[ -d "npm/$platform" ] || { echo "no npm/$platform package for this target" >&2; exit 1; }

stage=target/pack/stage
rm -rf "$stage" dist
mkdir -p "$stage/root" "$stage/$platform" dist

# Platform package: its package.json and the binary.
cp "npm/$platform/package.json" "$binary" "$stage/$platform/"
[ -f "npm/$platform/README.md" ] && cp "npm/$platform/README.md" "$stage/$platform/"

# Root package: what package.json's "files" lists, plus optionalDependencies on every platform
# package at the same version (what `napi pre-publish` adds at publish time), and no dev-only
# fields.
node -e '
  const fs = require("fs");
  const pkg = JSON.parse(fs.readFileSync("package.json", "utf8"));
  const targets = fs.readdirSync("npm").filter((d) => fs.existsSync(`npm/${d}/package.json`));
  pkg.optionalDependencies = Object.fromEntries(
    targets.map((d) => [JSON.parse(fs.readFileSync(`npm/${d}/package.json`, "utf8")).name, pkg.version]).sort(),
  );
  delete pkg.devDependencies;
  delete pkg.scripts;
  fs.writeFileSync(process.argv[1], JSON.stringify(pkg, null, 2) + "\n");
' "$stage/root/package.json"
for f in $(node -p 'require("./package.json").files.join("\n")'); do
  mkdir -p "$stage/root/$(dirname "$f")"
  cp -R "$f" "$stage/root/$f"
done
cp README.md "$stage/root/"

for dir in "$stage/root" "$stage/$platform"; do
  (cd "$dir" && npm pack --silent --pack-destination "$OLDPWD/dist" >/dev/null)
done

for tgz in dist/*.tgz; do
  echo "== $tgz ($(du -h "$tgz" | cut -f1) packed)"
  tar -tzvf "$tgz" | awk '{ printf "  %10s  %s\n", $3, $6 }'
done
