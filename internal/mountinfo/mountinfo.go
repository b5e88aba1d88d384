// Package mountinfo reads the lines of /proc/<pid>/mountinfo, which the node agent's CSI driver
// and the local test cluster both consult to know what is mounted where.
package mountinfo

import (
	"strconv"
	"strings"
)

// Unescape undoes the kernel's octal escapes in a mountinfo path: \040 for a space, \011 for a
// tab, \012 for a newline and \134 for a backslash.
func Unescape(p string) string {
	if !strings.Contains(p, `\`) {
		return p
	}
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		if p[i] == '\\' && i+3 < len(p) {
			if n, err := strconv.ParseUint(p[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(p[i])
	}
	return b.String()
}
