package render

import (
	"bytes"
	"context"
	"crypto/sha256"
	"io"
	"sync"
	"testing"
)

// TestConcurrentPDFsLeaveTheEmbeddedFontsAlone: the worker renders exports in
// parallel; each PDF embeds a subset of the same fonts, and no render may
// write into the bytes the others read (under -race a shared write is
// reported), nor change them for the next export.
func TestConcurrentPDFsLeaveTheEmbeddedFontsAlone(t *testing.T) {
	before := [2][32]byte{sha256.Sum256(dejaVuSans), sha256.Sum256(dejaVuSansBold)}
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Go(func() { errs[i] = Render(context.Background(), io.Discard, PDF, DemoCase(), fixedOptions()) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("render %d: %v", i, err)
		}
	}
	if after := [2][32]byte{sha256.Sum256(dejaVuSans), sha256.Sum256(dejaVuSansBold)}; after != before {
		t.Error("rendering changed the embedded font bytes")
	}
	// And the same document twice is the same bytes: nothing carried over.
	if a, b := renderBytes(t, PDF, DemoCase(), fixedOptions()), renderBytes(t, PDF, DemoCase(), fixedOptions()); !bytes.Equal(a, b) {
		t.Error("two renders of the same case differ")
	}
}
