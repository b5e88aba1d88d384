package agent

import (
	"cmp"
	"slices"

	"github.com/mlkube/mlkube/api/wire"
)

// listEntry is one line of a list page: an object, or a prefix that groups
// several.
type listEntry struct {
	key    string
	prefix bool
	info   wire.ObjectInfo
}

// pageBuilder keeps the first entries of a list page by key, out of entries
// added in any order: a node's walk, or the pages of every node. It holds at
// most about twice a page at a time, however many objects go through it.
type pageBuilder struct {
	q       listQuery
	entries []listEntry
	// more: some entry past the page is known (a node said its page was not its last).
	more bool
}

func (b *pageBuilder) add(e listEntry) {
	if e.key <= b.q.after {
		return
	}
	b.entries = append(b.entries, e)
	if len(b.entries) >= 2*(b.q.limit+1) {
		b.compact()
	}
}

// addPage adds a node's page.
func (b *pageBuilder) addPage(l wire.ObjectList) {
	for _, it := range l.Items {
		b.add(listEntry{key: it.Name, info: it})
	}
	for _, p := range l.Prefixes {
		b.add(listEntry{key: p, prefix: true})
	}
	b.more = b.more || l.Next != ""
}

// compact sorts the entries, drops repeated prefixes and keeps limit+1: one
// past the page says whether there is a next.
func (b *pageBuilder) compact() {
	slices.SortFunc(b.entries, func(x, y listEntry) int { return cmp.Compare(x.key, y.key) })
	b.entries = slices.CompactFunc(b.entries, func(x, y listEntry) bool { return x.prefix && y.prefix && x.key == y.key })
	if len(b.entries) > b.q.limit+1 {
		b.entries = b.entries[:b.q.limit+1]
	}
}

// page returns the page: sorted, at most limit entries, Next set when more
// may follow.
func (b *pageBuilder) page() wire.ObjectList {
	b.compact()
	entries := b.entries
	more := b.more
	if len(entries) > b.q.limit {
		entries, more = entries[:b.q.limit], true
	}
	l := wire.ObjectList{Items: []wire.ObjectInfo{}}
	for _, e := range entries {
		if e.prefix {
			l.Prefixes = append(l.Prefixes, e.key)
		} else {
			l.Items = append(l.Items, e.info)
		}
	}
	if more && len(entries) > 0 {
		l.Next = entries[len(entries)-1].key
	}
	return l
}
