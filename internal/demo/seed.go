package demo

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Client calls the API as one tenant with a bearer token.
type Client struct {
	BaseURL string // e.g. http://127.0.0.1:8080
	Tenant  string
	Token   string
	HTTP    *http.Client
}

// Result says what the seed did.
type Result struct {
	Skipped                                             bool // the tenant already had initiatives
	Initiatives, Benefits, Actuals, Costs, Stakeholders int
	Engagements                                         int
	BusinessCases                                       int
}

// Seed creates the portfolio in the tenant unless it already has initiatives, so running it on
// every `make run` seeds once. Months are relative to now: 18 months of actuals ending last month.
func Seed(ctx context.Context, c Client, p Portfolio, now time.Time) (Result, error) {
	var res Result
	// Archived initiatives are listed only when asked for: count both lists.
	for _, path := range []string{"/v1/initiatives?page_size=1", "/v1/initiatives?page_size=1&status=archived"} {
		var list struct {
			Meta struct {
				Pagination struct {
					Total int `json:"total"`
				} `json:"pagination"`
			} `json:"meta"`
		}
		if err := c.call(ctx, http.MethodGet, path, nil, &list); err != nil {
			return res, err
		}
		if list.Meta.Pagination.Total > 0 {
			res.Skipped = true
			return res, nil
		}
	}

	// The first month is a quarter start, so quarterly benefits line up with their quarters.
	back := time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, time.UTC).AddDate(0, -HistoryMonths, 0)
	first := time.Date(back.Year(), back.Month()-(back.Month()-1)%3, 1, 0, 0, 0, 0, time.UTC)

	if err := c.seedFX(ctx, p, first); err != nil {
		return res, err
	}
	for _, in := range p.Initiatives {
		var created struct {
			ID string `json:"id"`
		}
		if err := c.call(ctx, http.MethodPost, "/v1/initiatives", map[string]any{
			"name": in.Name, "description": in.Description, "industry": in.Industry, "segment": in.Segment,
			"expected_start_date": date(first, 0), "expected_end_date": date(first, 59),
		}, &created); err != nil {
			return res, fmt.Errorf("initiative %q: %w", in.Name, err)
		}
		res.Initiatives++
		base := "/v1/initiatives/" + created.ID
		for _, b := range in.Benefits {
			n, err := c.seedBenefit(ctx, created.ID, b, first)
			if err != nil {
				return res, fmt.Errorf("benefit %q: %w", b.Name, err)
			}
			res.Benefits++
			res.Actuals += n
		}
		for _, cost := range in.Costs {
			body := map[string]any{"name": cost.Name, "category": cost.Category, "amount": cost.Amount,
				"currency": cost.Currency, "period": month(first, cost.StartOffset), "recurrence": cost.Recurrence}
			if cost.Months > 0 {
				body["end_period"] = month(first, cost.StartOffset+cost.Months-1)
			}
			if err := c.call(ctx, http.MethodPost, base+"/costs", body, nil); err != nil {
				return res, fmt.Errorf("cost %q: %w", cost.Name, err)
			}
			res.Costs++
		}
		for _, s := range in.Stakeholders {
			n, err := c.seedStakeholder(ctx, created.ID, s, now)
			if err != nil {
				return res, fmt.Errorf("stakeholder %q: %w", s.Name, err)
			}
			res.Stakeholders++
			res.Engagements += n
		}
		for _, bc := range in.BusinessCases {
			n, err := c.seedBusinessCase(ctx, created.ID, bc, now)
			if err != nil {
				return res, fmt.Errorf("business case %q: %w", bc.Name, err)
			}
			res.BusinessCases += n
		}
		for _, status := range in.Path {
			if err := c.call(ctx, http.MethodPost, base+"/status", map[string]any{"status": status, "reason": "demo data"}, nil); err != nil {
				return res, fmt.Errorf("initiative %q to %s: %w", in.Name, status, err)
			}
		}
	}
	return res, nil
}

func (c Client) seedFX(ctx context.Context, p Portfolio, first time.Time) error {
	rates := []map[string]any{}
	for cur, rate := range p.FX {
		for m := range 72 { // history plus the five-year horizon of every figure
			rates = append(rates, map[string]any{"currency": cur, "period": month(first, m), "rate": rate})
		}
	}
	return c.call(ctx, http.MethodPut, "/v1/settings/fx-rates", map[string]any{"rates": rates}, nil)
}

func (c Client) seedBenefit(ctx context.Context, initiativeID string, b Benefit, first time.Time) (int, error) {
	body := map[string]any{"initiative_id": initiativeID, "name": b.Name, "category": b.Category, "unit": b.Unit,
		"measurement_frequency": b.Frequency, "expected_value": b.ExpectedValue, "expected_start_date": date(first, b.StartOffset)}
	if b.Currency != "" {
		body["currency"] = b.Currency
	}
	var created struct {
		ID string `json:"id"`
	}
	if err := c.call(ctx, http.MethodPost, "/v1/benefits", body, &created); err != nil {
		return 0, err
	}
	step := 1
	if b.Frequency == "quarterly" {
		step = 3
	}
	for i := range b.ActualPeriods {
		if err := c.call(ctx, http.MethodPost, "/v1/benefits/"+created.ID+"/actuals", map[string]any{
			"period": month(first, b.StartOffset+i*step), "value": b.Actual(i), "notes": "monthly finance close",
		}, nil); err != nil {
			return i, err
		}
	}
	return b.ActualPeriods, nil
}

func (c Client) seedStakeholder(ctx context.Context, initiativeID string, s Stakeholder, now time.Time) (int, error) {
	var created struct {
		ID string `json:"id"`
	}
	if err := c.call(ctx, http.MethodPost, "/v1/stakeholders", map[string]any{"initiative_id": initiativeID, "name": s.Name,
		"email": s.Email, "role": s.Role, "department": s.Department, "influence": s.Influence, "interest": s.Interest,
	}, &created); err != nil {
		return 0, err
	}
	for _, e := range s.Engagements {
		if err := c.call(ctx, http.MethodPost, "/v1/stakeholders/"+created.ID+"/engagement", map[string]any{
			"type": e.Type, "sentiment": e.Sentiment, "notes": e.Notes, "date": now.AddDate(0, 0, -e.DaysAgo).Format(time.DateOnly),
		}, nil); err != nil {
			return 0, err
		}
	}
	return len(s.Engagements), nil
}

// seedBusinessCase creates a case, approves it when asked (freezing its figures and documents)
// and copies it into a new draft version when asked; it returns how many cases it created.
func (c Client) seedBusinessCase(ctx context.Context, initiativeID string, bc BusinessCase, now time.Time) (int, error) {
	ids := make([]string, len(bc.Sections))
	content := map[string]any{}
	for i, s := range bc.Sections {
		ids[i] = s.ID
		content[s.ID] = map[string]any{"title": s.Title, "body": s.Body}
	}
	var created struct {
		ID string `json:"id"`
	}
	body := map[string]any{"initiative_id": initiativeID, "name": bc.Name, "template": bc.Template, "sections": ids, "content": content}
	if d := bc.Decision; d != nil {
		r := d.Request(now)
		ask := map[string]any{"ask": r.Ask, "recommendation": r.Recommendation}
		if r.Amount != nil {
			ask["amount"], ask["currency"] = json.Number(r.Amount.String()), r.Currency
		}
		if r.DecideBy != nil {
			ask["decide_by"] = r.DecideBy.Format(time.DateOnly)
		}
		body["decision_request"] = ask
	}
	if err := c.call(ctx, http.MethodPost, "/v1/business-cases", body, &created); err != nil {
		return 0, err
	}
	path := "/v1/business-cases/" + created.ID
	if bc.Approve != "" {
		if err := c.call(ctx, http.MethodPost, path+"/approve", map[string]any{"approval_level": bc.Approve, "notes": bc.Notes}, nil); err != nil {
			return 1, err
		}
	}
	if !bc.NextVersion {
		return 1, nil
	}
	if err := c.call(ctx, http.MethodPost, path+"/versions", nil, nil); err != nil {
		return 1, err
	}
	return 2, nil
}

// call sends one request and decodes a 2xx answer into out (when not nil). A 429 is retried
// after its Retry-After, as docs/api-conventions.md tells every client to do.
func (c Client) call(ctx context.Context, method, path string, body, out any) error {
	var raw []byte
	if body != nil {
		var err error
		if raw, err = json.Marshal(body); err != nil {
			return err
		}
	}
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	for attempt := 0; ; attempt++ {
		req, err := http.NewRequestWithContext(ctx, method, strings.TrimRight(c.BaseURL, "/")+path, bytes.NewReader(raw))
		if err != nil {
			return err
		}
		req.Header.Set("Authorization", "Bearer "+c.Token)
		req.Header.Set("X-Tenant-ID", c.Tenant)
		if body != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := hc.Do(req)
		if err != nil {
			return err
		}
		data, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
		_ = resp.Body.Close()
		if err != nil {
			return err
		}
		if resp.StatusCode == http.StatusTooManyRequests && attempt < 10 {
			wait, _ := strconv.Atoi(resp.Header.Get("Retry-After"))
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(time.Duration(max(wait, 1)) * time.Second):
			}
			continue
		}
		if resp.StatusCode/100 != 2 {
			return fmt.Errorf("%s %s: %d %s", method, path, resp.StatusCode, bytes.TrimSpace(data))
		}
		if out != nil {
			return json.Unmarshal(data, out)
		}
		return nil
	}
}
