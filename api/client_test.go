package api_test

import (
	"context"
	"net/http"
	"slices"
	"testing"

	"github.com/valuecase/valuecase/api/client"
)

// TestGeneratedClient drives the real server, over a real connection, with the Go client
// oapi-codegen generates from api/openapi.yaml (api/client): what a user of the document gets.
func TestGeneratedClient(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, "enterprise")
	admin := ts.admin()
	bearer := func(_ context.Context, req *http.Request) error {
		req.Header.Set("Authorization", "Bearer "+ts.token(admin))
		return nil
	}
	c, err := client.NewClientWithResponses("http://"+ts.listen(), client.WithRequestEditorFn(bearer))
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	tenant := ts.tenant

	created, err := c.CreateInitiativeWithResponse(ctx, &client.CreateInitiativeParams{XTenantID: tenant},
		client.InitiativeCreate{Name: "Generated Client", Industry: new("fintech")})
	if err != nil {
		t.Fatal(err)
	}
	in := created.JSON201
	if created.StatusCode() != http.StatusCreated || in == nil {
		t.Fatalf("create: status %d, body %s", created.StatusCode(), created.Body)
	}
	if in.Name != "Generated Client" || in.Status != client.InitiativeStatusDraft || in.Industry == nil || *in.Industry != "fintech" || in.OwnerId == nil || *in.OwnerId != admin.sub {
		t.Errorf("create: decoded %+v from %s", in, created.Body)
	}
	if loc := created.Headers201; loc == nil || loc.Location != "/v1/initiatives/"+in.Id.String() || loc.XRateLimitLimit < 1 {
		t.Errorf("create: headers %+v", loc)
	}
	if _, err := c.CreateInitiativeWithResponse(ctx, &client.CreateInitiativeParams{XTenantID: tenant}, client.InitiativeCreate{Name: "Another"}); err != nil {
		t.Fatal(err)
	}

	sort, order := client.ListInitiativesParamsSortName, client.ListInitiativesParamsOrderAsc
	list, err := c.ListInitiativesWithResponse(ctx, &client.ListInitiativesParams{XTenantID: tenant, Sort: &sort, Order: &order})
	if err != nil {
		t.Fatal(err)
	}
	if list.StatusCode() != http.StatusOK || list.JSON200 == nil {
		t.Fatalf("list: status %d, body %s", list.StatusCode(), list.Body)
	}
	var names []string
	for _, i := range list.JSON200.Data {
		names = append(names, i.Name)
	}
	if !slices.Equal(names, []string{"Another", "Generated Client"}) || list.JSON200.Meta.Pagination.Total != 2 {
		t.Errorf("list: names %v, pagination %+v", names, list.JSON200.Meta.Pagination)
	}

	// The nullable review of the detail decodes as nil.
	got, err := c.GetInitiativeWithResponse(ctx, in.Id.String(), &client.GetInitiativeParams{XTenantID: tenant})
	if err != nil {
		t.Fatal(err)
	}
	if got.JSON200 == nil || got.JSON200.Id != in.Id || got.JSON200.Review != nil {
		t.Errorf("get: status %d, body %s", got.StatusCode(), got.Body)
	}

	// An error decodes into the documented body, message and request id included.
	dup, err := c.CreateInitiativeWithResponse(ctx, &client.CreateInitiativeParams{XTenantID: tenant}, client.InitiativeCreate{Name: "generated client"})
	if err != nil {
		t.Fatal(err)
	}
	if e := dup.JSON409; e == nil || e.Error.Code != client.ErrorCodeALREADYEXISTS || e.Error.Message == "" ||
		e.Error.RequestId == "" || e.Error.RequestId != dup.HTTPResponse.Header.Get("X-Request-ID") {
		t.Errorf("duplicate: status %d, decoded %+v from %s", dup.StatusCode(), e, dup.Body)
	}
}
