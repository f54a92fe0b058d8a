package api_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"go.temporal.io/api/enums/v1"
	"google.golang.org/protobuf/proto"

	"github.com/valuecase/valuecase/internal/businesscase"
	"github.com/valuecase/valuecase/internal/testenv"
	"github.com/valuecase/valuecase/internal/validation"
	"github.com/valuecase/valuecase/worker"
	"github.com/valuecase/valuecase/workflows"
)

// An export of a case whose every section holds the most text a section may
// (20,000 characters, many of them multi-byte) completes, and its workflow
// history carries none of that text: the render reads the case by id, so no
// case comes near Temporal's 2 MB payload limit.
func TestExportOfMaximalSectionsKeepsTheCaseOutOfHistory(t *testing.T) {
	ts := newTestServer(t, "enterprise")
	admin := ts.admin()
	initID := ts.createInitiative(admin, map[string]any{"name": "Zürich–Łódź hub"})
	sections := validation.Names(businesscase.Sections)
	content := map[string]any{}
	textBytes := 0
	for i, s := range sections {
		end := fmt.Sprintf(" END%dOFSECTION", i+1)
		body := []rune(strings.Repeat("Zürich–Łódź rollout € ", businesscase.MaxBodyLen))[:businesscase.MaxBodyLen-len(end)]
		text := string(body) + end
		textBytes += len(text)
		content[s] = map[string]any{"title": strings.Repeat("T", businesscase.MaxTitleLen), "body": text}
	}
	r := ts.do(&admin, "POST", "/v1/business-cases", map[string]any{"initiative_id": initID, "name": "Maximal sections", "template": "technical_deep_dive",
		"sections": sections, "content": content})
	expect(t, r, 201)
	caseID := r.json(t)["id"].(string)

	runWorker(t, &worker.Worker{Config: testConfig(t), Pool: ts.pool, Temporal: testenv.TemporalClient(t), Log: testenv.QuietLogger()})
	r = ts.do(&admin, "POST", "/v1/business-cases/"+caseID+"/export", map[string]any{"format": "docx", "include_appendices": true})
	expect(t, r, 202)
	exp := r.json(t)
	var got map[string]any
	testenv.Eventually(t, 2*time.Minute, "the export to finish", func() bool {
		got = ts.do(&admin, "GET", exp["status_url"].(string), nil).json(t)
		return got["status"] == "succeeded" || got["status"] == "failed"
	})
	if got["status"] != "succeeded" {
		t.Fatalf("export: %v", got)
	}
	expect(t, ts.do(&admin, "GET", exp["status_url"].(string)+"/download", nil), 200)

	wfID := workflows.BusinessCaseExportWorkflowID(ts.tenant.String(), caseID, exp["id"].(string))
	it := testenv.TemporalClient(t).GetWorkflowHistory(context.Background(), wfID, "", false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	historyBytes := 0
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		raw, err := proto.Marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		historyBytes += len(raw)
		if bytes.Contains(raw, []byte("OFSECTION")) || bytes.Contains(raw, []byte("rollout")) {
			t.Errorf("history event %d (%s) carries the case's text", ev.GetEventId(), ev.GetEventType())
		}
	}
	// The sections alone are textBytes; the history holds ids, choices and timestamps.
	if historyBytes > 32<<10 {
		t.Errorf("the history is %d bytes for %d bytes of section text, want it independent of the case (under 32 KiB)", historyBytes, textBytes)
	}
	t.Logf("%d bytes of section text; %d bytes of history", textBytes, historyBytes)
}
