package validation

import (
	"errors"
	"slices"
	"testing"
)

func TestErrIsNilWhenNothingFailed(t *testing.T) {
	var es Errors
	es.Append(nil)
	if err := es.Err(); err != nil {
		t.Fatalf("no failures must give a nil error, got %#v", err)
	}
}

func TestErrorsCollectAndUnwrap(t *testing.T) {
	var es Errors
	es.Add("currency", CodeRequired, "is required")
	es.Append(New("plan[2].period", CodeDuplicate, "%s is already planned", "2026-04"))
	err := es.Err()
	got, ok := errors.AsType[Errors](err)
	if !ok || len(got) != 2 || got[1].Field != "plan[2].period" || got[1].Message != "2026-04 is already planned" {
		t.Fatalf("got %#v", err)
	}
	if err.Error() != "currency: is required; plan[2].period: 2026-04 is already planned" {
		t.Errorf("message %q", err.Error())
	}
}

func TestNames(t *testing.T) {
	type colour string
	if got := Names([]colour{"red", "green"}); !slices.Equal(got, []string{"red", "green"}) {
		t.Errorf("got %v", got)
	}
}

func TestAppendTakesWhatChecksReturn(t *testing.T) {
	var es Errors
	check := func(fail bool) error { // how a single-field check returns: error, nil on success
		if fail {
			return New("rate", CodeOutOfRange, "must be positive")
		}
		return nil
	}
	es.Append(check(false))
	es.Append(check(true))
	es.Append(Errors{New("a", CodeRequired, "x"), New("b", CodeRequired, "y")})
	if len(es) != 3 || es[0].Field != "rate" || es[2].Field != "b" {
		t.Fatalf("got %v", es)
	}
	defer func() {
		if recover() == nil {
			t.Error("an error that is not a validation failure must not be swallowed")
		}
	}()
	es.Append(errors.New("database down"))
}
