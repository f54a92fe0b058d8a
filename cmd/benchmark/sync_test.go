package main

import "testing"

// The baseline writes the feed's pages: every record once, in order, in pages
// of the feed's size (the last one shorter).
func TestSyncPages(t *testing.T) {
	for _, c := range []struct{ records, size, pages, last int }{
		{10_000, 200, 50, 200},
		{1_001, 200, 6, 1},
		{5, 200, 1, 5},
	} {
		pages := syncPages(c.records, c.size)
		if len(pages) != c.pages || len(pages[len(pages)-1]) != c.last {
			t.Fatalf("%d records, pages of %d: %d pages, last %d; want %d, last %d", c.records, c.size, len(pages), len(pages[len(pages)-1]), c.pages, c.last)
		}
		next := 0
		for _, p := range pages {
			if len(p) > c.size {
				t.Fatalf("a page of %d", len(p))
			}
			for _, i := range p {
				if i != next {
					t.Fatalf("record %d where %d was due", i, next)
				}
				next++
			}
		}
		if next != c.records {
			t.Fatalf("%d records paged, want %d", next, c.records)
		}
	}
}
