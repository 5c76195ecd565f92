#!/usr/bin/env bash
# Makes sure /dev/null is the null device. Some sandboxed machines hand it over as a plain file:
# everything written there piles up, and every process given /dev/null as its input reads it
# back. Cargo feeds its rustc probe from /dev/null, so the probe then fails on stray build output,
# cargo caches that failure in target/.rustc_info.json, and every later cargo command in the
# checkout fails. Recreate the device where we may; otherwise at least empty the file.
set -u
[ -c /dev/null ] && exit 0
echo "note: /dev/null is not a character device here; recreating it" >&2
if rm -f /dev/null && mknod -m 666 /dev/null c 1 3; then
    exit 0
fi
# Not allowed to make a device: an empty file at least carries nothing over between steps.
: >/dev/null 2>&1 || true
rm -f target/.rustc_info.json
exit 0
