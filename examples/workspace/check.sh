#!/bin/sh
# The project's check: greet must say hello. Runs under busybox sh.
. ./greet.sh
out=$(greet world)
if [ "$out" = "hello, world" ]; then
  echo "check passed"
  exit 0
fi
echo "check failed: got '$out'" >&2
exit 1
