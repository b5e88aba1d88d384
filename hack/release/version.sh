#!/usr/bin/env bash
# Prints the version a build stamps into every binary (internal/version), for the Makefile's VERSION:
#   - the tag naming HEAD, when a v* tag does and the tracked files are unchanged: a release build;
#   - otherwise the release the VERSION file says is being prepared, marked as a development build
#     of this commit: v0.1.0-dev.g8427725, with .dirty when tracked files changed. It sorts before
#     the release in semver, and holds only characters an image tag allows (no '+').
# A release tag is expected to equal the VERSION file; when it does not, the tag wins and this
# says so on stderr.
set -euo pipefail
cd "$(dirname "$0")/../.."
release=$(tr -d '[:space:]' <VERSION)
if ! git rev-parse --git-dir >/dev/null 2>&1; then
  echo "$release-dev"
  exit 0
fi
dirty=""
git diff --quiet HEAD -- 2>/dev/null || dirty=".dirty"
if tag=$(git describe --tags --exact-match --match 'v*' HEAD 2>/dev/null) && [ -z "$dirty" ]; then
  [ "$tag" = "$release" ] || echo "version: tag $tag names HEAD but VERSION says $release; using the tag" >&2
  echo "$tag"
  exit 0
fi
echo "$release-dev.g$(git rev-parse --short HEAD)$dirty"
