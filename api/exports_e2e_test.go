package api_test

import (
	"archive/zip"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/valuecase/valuecase/internal/testenv"
	"github.com/valuecase/valuecase/worker"
)

// TestBusinessCaseExportsEndToEnd: for each format, POST export → the
// workflow on the dev server renders and stores it → poll → download with
// the format's Content-Type, file name and ETag. Another tenant sees 404;
// a bad format is 422; downloading before success is 409.
func TestBusinessCaseExportsEndToEnd(t *testing.T) {
	ts := newTestServer(t, "enterprise")
	admin := ts.admin()
	initID := ts.createInitiative(admin, map[string]any{"name": "Łódź plant"})
	r := ts.do(&admin, "POST", "/v1/business-cases", businessCaseBody(initID, "Zürich data centre exit"))
	expect(t, r, 201)
	id := r.json(t)["id"].(string)
	base := "/v1/business-cases/" + id

	expect(t, ts.do(&admin, "POST", base+"/export", map[string]any{"format": "odt"}), 422)
	expect(t, ts.do(&admin, "POST", base+"/export", map[string]any{"format": "pdf", "watermark": strings.Repeat("x", 65)}), 422)

	// Queued before any worker runs: not downloadable yet.
	r = ts.do(&admin, "POST", base+"/export", map[string]any{"format": "pdf", "include_appendices": true, "watermark": "DRAFT – board only"})
	expect(t, r, 202)
	first := r.json(t)
	if first["status"] != "queued" || first["download_url"] != nil || r.header.Get("Location") != first["status_url"] {
		t.Fatalf("queued export: %s (Location %s)", r.body, r.header.Get("Location"))
	}
	expect(t, ts.do(&admin, "GET", first["status_url"].(string)+"/download", nil), 409)

	other := contractTenant(t, ts, "enterprise")
	expect(t, ts.do(&other, "POST", base+"/export", map[string]any{"format": "pdf"}), 404)
	expect(t, ts.do(&other, "GET", first["status_url"].(string), nil), 404)
	expect(t, ts.do(&other, "GET", first["status_url"].(string)+"/download", nil), 404)

	runWorker(t, &worker.Worker{Config: testConfig(t), Pool: ts.pool, Temporal: testenv.TemporalClient(t), Log: testenv.QuietLogger()})

	urls := map[string]string{"pdf": first["status_url"].(string)}
	for _, f := range []string{"docx", "pptx"} {
		r := ts.do(&admin, "POST", base+"/export", map[string]any{"format": f})
		expect(t, r, 202)
		urls[f] = r.json(t)["status_url"].(string)
	}
	types := map[string]string{
		"pdf":  "application/pdf",
		"docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
		"pptx": "application/vnd.openxmlformats-officedocument.presentationml.presentation",
	}
	for f, u := range urls {
		var got map[string]any
		testenv.Eventually(t, 45*time.Second, f+" export to succeed", func() bool {
			got = ts.do(&admin, "GET", u, nil).json(t)
			if got["status"] == "failed" {
				t.Fatalf("%s export failed: %v", f, got["error"])
			}
			return got["status"] == "succeeded"
		})
		if got["progress"] != float64(100) || got["download_url"] != u+"/download" || got["size"].(float64) <= 0 {
			t.Errorf("%s succeeded export: %v", f, got)
		}
		d := ts.do(&admin, "GET", u+"/download", nil)
		expect(t, d, 200)
		if ct := d.header.Get("Content-Type"); ct != types[f] {
			t.Errorf("%s Content-Type %s", f, ct)
		}
		if cd := d.header.Get("Content-Disposition"); !strings.Contains(cd, "v1."+f) || !strings.HasPrefix(cd, "attachment;") {
			t.Errorf("%s Content-Disposition %s", f, cd)
		}
		if d.header.Get("ETag") != `"`+got["sha256"].(string)+`"` || float64(len(d.body)) != got["size"].(float64) {
			t.Errorf("%s ETag %s, %d bytes, resource %v", f, d.header.Get("ETag"), len(d.body), got)
		}
		if f == "pdf" {
			path := filepath.Join(t.TempDir(), "case.pdf")
			if err := os.WriteFile(path, d.body, 0o600); err != nil {
				t.Fatal(err)
			}
			out, err := exec.Command("pdftotext", path, "-").Output()
			if err != nil {
				t.Fatalf("pdftotext: %v", err)
			}
			if !strings.Contains(string(out), "Zürich data centre exit") || !strings.Contains(string(out), "DRAFT – board only") {
				t.Errorf("the PDF lacks the case name or watermark:\n%.600s", out)
			}
			continue
		}
		zr, err := zip.NewReader(bytes.NewReader(d.body), int64(len(d.body)))
		if err != nil {
			t.Fatalf("%s is not a zip: %v", f, err)
		}
		var ct []byte
		for _, zf := range zr.File {
			if zf.Name == "[Content_Types].xml" {
				rc, _ := zf.Open()
				var b bytes.Buffer
				_, _ = b.ReadFrom(rc)
				ct = b.Bytes()
			}
		}
		want := map[string]string{"docx": "wordprocessingml.document.main+xml", "pptx": "presentationml.presentation.main+xml"}[f]
		if !bytes.Contains(ct, []byte(want)) {
			t.Errorf("%s [Content_Types].xml lacks %s", f, want)
		}
	}
	list := ts.do(&admin, "GET", base+"/exports?page_size=2", nil)
	expect(t, list, 200)
	if m := list.json(t); len(m["data"].([]any)) != 2 || m["meta"].(map[string]any)["pagination"].(map[string]any)["total"] != float64(3) {
		t.Errorf("list: %s", list.body)
	}
}
