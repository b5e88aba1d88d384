package python

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// images maps the code form's runtime names to the images that run them.
// Each is this runtime on Debian's interpreter of that version
// (hack/python-runtime-image.sh); bookworm has python3.11 only.
var images = map[string]string{
	"python3.11": "mlkube/runtime-python3.11:dev",
}

// ImageFor returns the image of the code runtime named runtime (spec.code.runtime, e.g.
// "python3.11"), or an error listing the supported runtimes.
func ImageFor(runtime string) (string, error) {
	if img, ok := images[runtime]; ok {
		return img, nil
	}
	return "", fmt.Errorf("code runtime %q is not supported (supported: %s)",
		runtime, strings.Join(Runtimes(), ", "))
}

// Runtimes lists the supported code runtimes, sorted.
func Runtimes() []string {
	return slices.Sorted(maps.Keys(images))
}
