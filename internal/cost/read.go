package cost

import (
	"github.com/valuecase/valuecase/db/dbsqlc"
	"github.com/valuecase/valuecase/internal/finance"
	"github.com/valuecase/valuecase/internal/input"
	"github.com/valuecase/valuecase/internal/money"
)

// How long the texts of a cost may be (the API's limits on the same kinds of field).
const (
	maxNameLen      = 200
	maxShortTextLen = 100
)

// Fields are the writable fields of a cost as sent: the body of create, PUT
// and PATCH, and a row of a costs import. Has tells which the body carried.
type Fields struct {
	Name, Category, Currency, Period, Recurrence, EndPeriod *string
	Amount                                                  *float64
	InitiativeID                                            *string
	Has                                                     map[string]bool
}

var writableFields = []string{"name", "category", "amount", "currency", "period", "recurrence", "end_period"}

// ReadFields reads a cost body's fields (the body's errors are left in b):
// the single routes' reader and the import's. full (create, PUT) needs every
// field but recurrence (default once) and end_period (default none).
func ReadFields(b *input.Object, full bool) Fields {
	f := Fields{Has: map[string]bool{}}
	for _, name := range writableFields {
		f.Has[name] = b.Has(name)
	}
	f.Name = input.Trimmed(b.Text("name", full || f.Has["name"], maxNameLen))
	f.Category = b.Text("category", full || f.Has["category"], maxShortTextLen)
	f.Amount = b.Number("amount", full || f.Has["amount"])
	f.Currency = b.Text("currency", full || f.Has["currency"], maxShortTextLen)
	f.Period = b.Text("period", full || f.Has["period"], maxShortTextLen)
	f.Recurrence = b.Text("recurrence", !full && f.Has["recurrence"], maxShortTextLen) // null in a full body: the default
	f.EndPeriod = b.Text("end_period", false, maxShortTextLen)
	f.InitiativeID = b.Text("initiative_id", false, maxShortTextLen)
	b.Ignore("id", "created_at", "updated_at")
	return f
}

// Definition is the stored cost with the sent fields laid over it (PUT and
// create start from nothing: recurrence once, no end).
func (f Fields) Definition(base dbsqlc.InitiativeCost, full bool) (name string, d Definition) {
	d = Definition{Category: Category(base.Category), Amount: money.Stored(base.Amount), Currency: base.Currency, Recurrence: finance.Recurrence(base.Recurrence)}
	if !base.Period.IsZero() {
		d.Period = finance.MonthOfTime(base.Period).String()
	}
	if base.EndPeriod != nil {
		d.EndPeriod = new(finance.MonthOfTime(*base.EndPeriod).String())
	}
	name = base.Name
	if full {
		d.Recurrence, d.EndPeriod = finance.Once, nil
	}
	if f.Name != nil {
		name = *f.Name
	}
	if f.Category != nil {
		d.Category = Category(*f.Category)
	}
	if f.Amount != nil {
		d.Amount = *f.Amount
	}
	if f.Currency != nil {
		d.Currency = *f.Currency
	}
	if f.Period != nil {
		d.Period = *f.Period
	}
	if f.Recurrence != nil {
		d.Recurrence = finance.Recurrence(*f.Recurrence)
	}
	if full || f.Has["end_period"] {
		d.EndPeriod = f.EndPeriod
	}
	return name, d
}
