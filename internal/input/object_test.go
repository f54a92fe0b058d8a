package input

import (
	"encoding/json"
	"errors"
	"slices"
	"testing"

	"github.com/valuecase/valuecase/internal/validation"
)

func fields(t *testing.T, errs validation.Errors) []string {
	t.Helper()
	out := make([]string, len(errs))
	for i, e := range errs {
		out[i] = e.Field + ":" + e.Code
	}
	return out
}

func TestDoneNamesEveryFailureAndUnknownField(t *testing.T) {
	o, ok := Decode(json.RawMessage(`{"name": 7, "when": "2026-13-01", "extra": true, "kind": "c"}`))
	if !ok {
		t.Fatal("an object did not decode")
	}
	o.Text("name", true, 10)
	o.Date("when")
	o.Enum("kind", true, []string{"a", "b"})
	o.Text("missing", true, 10)
	err := o.Done()
	got := fields(t, o.Errors())
	want := []string{"name:invalid_type", "when:invalid_format", "kind:invalid_value", "missing:required", "extra:unknown_field"}
	if !slices.Equal(got, want) {
		t.Fatalf("failures %v, want %v", got, want)
	}
	if _, ok := errors.AsType[validation.Errors](err); !ok {
		t.Fatalf("Done returned %T, want validation.Errors (the 422 of the error handler)", err)
	}
}

func TestAdoptPrefixesANestedObjectsFailures(t *testing.T) {
	parent := New(nil)
	sub, ok := Decode(json.RawMessage(`{"period": ""}`))
	if !ok {
		t.Fatal("an object did not decode")
	}
	sub.Text("period", true, 7)
	parent.Adopt("plan[2].", sub)
	if got := fields(t, parent.Errors()); !slices.Equal(got, []string{"plan[2].period:required"}) {
		t.Fatalf("adopted %v", got)
	}
	if parent.Done() == nil {
		t.Fatal("a parent holding a nested failure passed")
	}
}

func TestDecodeRefusesWhatIsNotAnObject(t *testing.T) {
	for _, raw := range []string{`null`, `[1]`, `"x"`, `{`} {
		if _, ok := Decode(json.RawMessage(raw)); ok {
			t.Errorf("%s decoded as an object", raw)
		}
	}
}

func TestNothingFailedIsNil(t *testing.T) {
	o := New(map[string]json.RawMessage{"a": json.RawMessage(`"x"`)})
	if s := o.Text("a", true, 5); s == nil || *s != "x" {
		t.Fatalf("read %v", s)
	}
	if err := o.Done(); err != nil {
		t.Fatalf("Done = %v", err)
	}
}
