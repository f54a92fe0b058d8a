package integration

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/shopspring/decimal"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/db/dbsqlc"
	"github.com/valuecase/valuecase/internal/benefit"
	"github.com/valuecase/valuecase/internal/initiative"
	"github.com/valuecase/valuecase/internal/integration/provider"
	"github.com/valuecase/valuecase/internal/rbac"
	"github.com/valuecase/valuecase/internal/validation"
)

// Limits of what a sync writes (the API's limits on the same fields).
const (
	maxNameLen        = 200
	maxShortLen       = 200
	maxDescriptionLen = 10_000
	maxExternalIDLen  = 255
)

// ItemError is one item a sync could not write: the provider's id and why.
type ItemError struct {
	ExternalID string `json:"external_id"`
	Message    string `json:"message"`
}

// Counts is what writing one page did.
type Counts struct {
	Fetched, Created, Updated, Unchanged, Failed int
	Errors                                       []ItemError // the page's item errors, in order
}

func (c *Counts) fail(id, format string, args ...any) {
	c.Failed++
	c.Errors = append(c.Errors, ItemError{ExternalID: id, Message: fmt.Sprintf(format, args...)})
}

func (c *Counts) outcome(o string) {
	switch o {
	case "created":
		c.Created++
	case "updated":
		c.Updated++
	default:
		c.Unchanged++
	}
}

// Target is what a sync writes into: the tenant, the integration (its records' source) and,
// for jira, the initiative its epics become projects of.
type Target struct {
	TenantID      uuid.UUID
	IntegrationID uuid.UUID
	Provider      string
	InitiativeID  uuid.UUID // jira only
}

// ErrTargetGone: the jira integration's initiative does not exist (any more) or is archived;
// the sync fails with this reason (no item can be written).
var ErrTargetGone = errors.New("the initiative this integration maps epics to does not exist or is archived; set config.initiative_id with PUT")

// WritePage upserts one fetched page in the caller's tenant transaction, idempotently by
// external id and with one multi-row statement per kind of record (no round trip per row):
// initiatives (salesforce, hubspot), projects of the mapped initiative (jira) or benefit
// actuals (http_feed). Items the provider marked invalid, and items that fail validation here,
// are counted as failed with the reason; the others are written. Writing the same page again
// changes nothing (unchanged). now is the clock for "period in the future" checks.
func WritePage(ctx context.Context, tx pgx.Tx, t Target, items []provider.Item, now time.Time) (Counts, error) {
	c := Counts{Fetched: len(items)}
	var ini []provider.Item
	var proj []provider.Item
	var act []provider.Item
	for _, it := range items {
		id := it.ExternalID
		switch {
		case it.Invalid != "":
			c.fail(id, "%s", it.Invalid)
		case id == "" || len(id) > maxExternalIDLen:
			c.fail(truncate(id, 64), "the record has no usable id (1 to %d characters)", maxExternalIDLen)
		case it.Initiative != nil && (t.Provider == provider.Salesforce || t.Provider == provider.HubSpot):
			ini = append(ini, it)
		case it.Project != nil && t.Provider == provider.Jira:
			proj = append(proj, it)
		case it.Actual != nil && t.Provider == provider.HTTPFeed:
			act = append(act, it)
		default:
			c.fail(id, "the record is not of the kind this provider writes")
		}
	}
	source := Source(t.IntegrationID)
	var err error
	switch {
	case len(ini) > 0:
		err = writeInitiatives(ctx, tx, t, source, ini, &c)
	case len(proj) > 0:
		err = writeProjects(ctx, tx, t, source, proj, &c)
	case len(act) > 0:
		err = writeActuals(ctx, tx, t, source, act, &c, now)
	}
	return c, err
}

// latest keeps one item per key (the last one of the page: providers page oldest first) and
// reports the earlier duplicates as unchanged: one statement cannot write a row twice.
func latest(items []provider.Item, key func(provider.Item) string, c *Counts) []provider.Item {
	last := map[string]int{}
	for i, it := range items {
		last[key(it)] = i
	}
	out := items[:0:0]
	for i, it := range items {
		if last[key(it)] == i {
			out = append(out, it)
		} else {
			c.Unchanged++
		}
	}
	return out
}

// text checks a provider's text for a field: trimmed, valid UTF-8 without control characters,
// at most max characters; required ones must not be empty.
func text(field, s string, required bool, maxLen int) (string, error) {
	s = strings.TrimSpace(s)
	switch {
	case required && s == "":
		return "", fmt.Errorf("%s is empty", field)
	case utf8.RuneCountInString(s) > maxLen:
		return "", fmt.Errorf("%s is longer than %d characters", field, maxLen)
	}
	if err := validation.Text(field, s, field == "description"); err != nil {
		return "", err
	}
	return s, nil
}

// writeInitiatives writes opportunities and deals as initiatives by the
// operations the API's routes call (initiative.Create and Replace, with the
// integration's source): a new external id is created, a known one patched
// with the fields the source gives (its owner only when a user of the tenant
// has the owner's address); an archived initiative stays as it is.
func writeInitiatives(ctx context.Context, tx pgx.Tx, t Target, source string, items []provider.Item, c *Counts) error {
	items = latest(items, func(it provider.Item) string { return it.ExternalID }, c)
	var fields []initiative.Fields
	var names, externalIDs, emails []string
	ownerOf := map[int]string{}                                    // item → the owner's lower-case address
	seen := map[string]string{}                                    // lower(name) → external id, within the page
	sent := []string{"name", "description", "industry", "segment"} // what a source gives of an initiative
	for _, it := range items {
		f := it.Initiative
		name, err := text("name", f.Name, true, maxNameLen)
		if err != nil {
			c.fail(it.ExternalID, "%s", err)
			continue
		}
		desc, err := text("description", f.Description, false, maxDescriptionLen)
		if err != nil {
			c.fail(it.ExternalID, "%s", err)
			continue
		}
		industry, err1 := text("industry", f.Industry, false, maxShortLen)
		segment, err2 := text("segment", f.Segment, false, maxShortLen)
		if err := errors.Join(err1, err2); err != nil {
			c.fail(it.ExternalID, "%s", err)
			continue
		}
		if other, dup := seen[strings.ToLower(name)]; dup {
			c.fail(it.ExternalID, "name %q is also the name of record %s in the same page; initiative names are unique", name, other)
			continue
		}
		seen[strings.ToLower(name)] = it.ExternalID
		if owner := strings.TrimSpace(f.Owner); strings.Contains(owner, "@") && len(owner) <= 254 {
			ownerOf[len(fields)] = strings.ToLower(owner)
			emails = append(emails, strings.ToLower(owner))
		}
		in := initiative.Fields{Name: &name, Description: &desc, Industry: noneIfEmpty(industry), Segment: noneIfEmpty(segment),
			ExternalID: it.ExternalID, Has: map[string]bool{}}
		for _, field := range sent {
			in.Has[field] = true
		}
		fields, names, externalIDs = append(fields, in), append(names, name), append(externalIDs, it.ExternalID)
	}
	if len(fields) == 0 {
		return nil
	}
	// The owners the source names by address; one nobody of the tenant has keeps the owner there is.
	if len(emails) > 0 {
		owners, err := db.Q.InitiativeOwnersByEmail(ctx, tx, dbsqlc.InitiativeOwnersByEmailParams{TenantID: t.TenantID, Emails: emails})
		if err != nil {
			return fmt.Errorf("owners: %w", err)
		}
		byEmail := map[string]string{}
		for _, o := range owners {
			byEmail[o.Email] = o.ID.String()
		}
		for i, email := range ownerOf {
			if id, ok := byEmail[email]; ok {
				fields[i].OwnerID, fields[i].Has["owner_id"] = new(id), true
			}
		}
	}
	// The initiatives this source wrote, and the names other initiatives hold.
	stored, err := db.Q.InitiativesBySource(ctx, tx, dbsqlc.InitiativesBySourceParams{TenantID: t.TenantID, Source: &source, ExternalIds: externalIDs})
	if err != nil {
		return fmt.Errorf("initiatives of the source: %w", err)
	}
	byExternalID := map[string]dbsqlc.Initiative{}
	for _, in := range stored {
		byExternalID[*in.ExternalID] = in
	}
	holders, err := db.Q.BulkInitiativesExisting(ctx, tx, dbsqlc.BulkInitiativesExistingParams{TenantID: t.TenantID, Names: names})
	if err != nil {
		return fmt.Errorf("names: %w", err)
	}
	taken := map[int]bool{}
	for _, h := range holders {
		k := int(h.KeyN) - 1
		if own, ok := byExternalID[externalIDs[k]]; !ok || own.ID != h.Initiative.ID {
			taken[k] = true
		}
	}
	var creates []initiative.Fields
	var replacements []initiative.Replacement
	for i, f := range fields {
		cur, known := byExternalID[f.ExternalID]
		switch {
		case taken[i]:
			c.fail(f.ExternalID, "another initiative of the tenant is already named %q", *f.Name)
		case !known:
			creates = append(creates, f)
		case initiative.Same(cur, initiative.Merge(cur, f, false)):
			c.Unchanged++
		default:
			replacements = append(replacements, initiative.Replacement{Current: cur, Fields: f})
		}
	}
	// An integration writes with the tenant's authority (an Admin connected
	// it), so it may set any owner; its changes are recorded under its source.
	actor := initiative.Actor{TenantID: t.TenantID, Subject: source, Roles: []string{rbac.RoleAdmin}, Source: source}
	created, err := initiative.Create(ctx, tx, actor, creates)
	if err != nil {
		return fmt.Errorf("create initiatives: %w", err)
	}
	for k, o := range created {
		if o.Err != nil {
			c.fail(creates[k].ExternalID, "%s", o.Err)
			continue
		}
		c.Created++
	}
	replaced, err := initiative.Replace(ctx, tx, actor, replacements)
	if err != nil {
		return fmt.Errorf("update initiatives: %w", err)
	}
	for k, o := range replaced {
		switch {
		case errors.Is(o.Err, initiative.ErrArchived): // read-only: the source's change is not applied
			c.Unchanged++
		case o.Err != nil:
			c.fail(replacements[k].Fields.ExternalID, "%s", o.Err)
		default:
			c.Updated++
		}
	}
	return nil
}

// noneIfEmpty is an empty text as none.
func noneIfEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func writeProjects(ctx context.Context, tx pgx.Tx, t Target, source string, items []provider.Item, c *Counts) error {
	items = latest(items, func(it provider.Item) string { return it.ExternalID }, c)
	var projects []initiative.SourcedProject
	for _, it := range items {
		f := it.Project
		name, err := text("name", f.Name, true, maxNameLen)
		if err != nil {
			c.fail(it.ExternalID, "%s", err)
			continue
		}
		// The epic's key and status name become the description; Jira's workflow states do not
		// map onto a project's active/archived, so projects stay active (archived with the initiative).
		desc := strings.TrimSpace(f.Key)
		if s := strings.TrimSpace(f.Status); s != "" {
			desc += " · " + s
		}
		projects = append(projects, initiative.SourcedProject{ExternalID: it.ExternalID, Name: name, Description: truncate(desc, maxShortLen)})
	}
	actor := initiative.Actor{TenantID: t.TenantID, Subject: source, Source: source}
	outcomes, err := initiative.UpsertSourcedProjects(ctx, tx, actor, t.InitiativeID, projects)
	if errors.Is(err, initiative.ErrNotFound) || errors.Is(err, initiative.ErrArchived) {
		return ErrTargetGone
	}
	if err != nil {
		return fmt.Errorf("upsert projects: %w", err)
	}
	for _, o := range outcomes {
		c.outcome(o)
	}
	return nil
}

// writeActuals files a feed's page through benefit.FileActuals, the one path
// every actual takes (the single route and the actuals import call it too):
// the same checks, the corrections cap, and one benefit.actual_recorded per
// value that changed. The page names benefits by id or external_key; a value
// is stored as the exact decimal the provider sent. When the page files one
// benefit and period twice, the later item wins and the earlier counts as unchanged.
func writeActuals(ctx context.Context, tx pgx.Tx, t Target, source string, items []provider.Item, c *Counts, now time.Time) error {
	keys := make([]string, 0, len(items))
	for _, it := range items {
		keys = append(keys, strings.TrimSpace(it.Actual.BenefitKey))
	}
	found, err := db.Q.SyncBenefitsByKey(ctx, tx, dbsqlc.SyncBenefitsByKeyParams{TenantID: t.TenantID, Keys: keys})
	if err != nil {
		return fmt.Errorf("benefits by key: %w", err)
	}
	byKey := map[string]uuid.UUID{}
	for _, b := range found {
		byKey[b.ID.String()] = b.ID
		if b.ExternalKey != nil {
			byKey[*b.ExternalKey] = b.ID
		}
	}
	var inputs []benefit.ActualInput
	var filed []provider.Item // inputs[i] is filed[i]'s
	for _, it := range items {
		f := it.Actual
		id, ok := byKey[strings.TrimSpace(f.BenefitKey)]
		if !ok {
			c.fail(it.ExternalID, "no benefit has the id or external_key %q", truncate(f.BenefitKey, 100))
			continue
		}
		value, err := decimal.NewFromString(strings.TrimSpace(f.Value))
		if err != nil {
			c.fail(it.ExternalID, "value %q is not a decimal number", truncate(f.Value, 40))
			continue
		}
		in := benefit.ActualInput{BenefitID: id, Period: strings.TrimSpace(f.Period), Value: value}
		if evidence := strings.TrimSpace(f.EvidenceURL); evidence != "" {
			in.EvidenceURL = &evidence
		}
		inputs, filed = append(inputs, in), append(filed, it)
	}
	if len(inputs) == 0 {
		return nil
	}
	actor := benefit.Actor{TenantID: t.TenantID, Subject: source, Source: &source}
	outcomes, err := benefit.FileActuals(ctx, tx, actor, inputs, benefit.FileOptions{LastWins: true, Now: now})
	if err != nil {
		return fmt.Errorf("file actuals: %w", err)
	}
	for i, o := range outcomes {
		_, superseded := errors.AsType[*benefit.SupersededError](o.Err)
		switch {
		case superseded:
			c.Unchanged++ // a later item of the page files the same period
		case errors.Is(o.Err, benefit.ErrInitiativeArchived):
			c.fail(filed[i].ExternalID, "the benefit's initiative is archived; its actuals are read-only")
		case errors.Is(o.Err, benefit.ErrNotFound):
			c.fail(filed[i].ExternalID, "no benefit has the id or external_key %q", truncate(filed[i].Actual.BenefitKey, 100))
		case o.Err != nil:
			c.fail(filed[i].ExternalID, "%s", o.Err)
		case o.Filing == benefit.FirstValue:
			c.Created++
		case o.Filing == benefit.Correction:
			c.Updated++
		default:
			c.Unchanged++
		}
	}
	return nil
}

func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n]) + "…"
}
