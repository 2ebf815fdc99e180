#!/bin/sh
# Builds device-agent-<version>.pkg on FreeBSD from this directory (made by `npm run release`):
# root/ holds the files, +MANIFEST the metadata, dependency on node24 and install scripts.
#   sh build-pkg.sh && pkg add ./device-agent-*.pkg
set -eu
cd "$(dirname "$0")"
pkg create -M +MANIFEST -p pkg-plist -r root -o .
ls -l device-agent-*.pkg
