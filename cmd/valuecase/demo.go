package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/valuecase/valuecase/internal/demo"
)

func runDemo(ctx context.Context, args []string) error {
	if len(args) == 0 || args[0] != "seed" {
		return errors.New("usage: valuecase demo seed --url URL --tenant ID --token-file FILE")
	}
	fs := flags("demo seed", "Seeds the demo portfolio (initiatives, benefits with 18 months of actuals, costs, FX rates,\n"+
		"stakeholders with engagements) into a tenant through the running API, so it obeys every rule a client\n"+
		"obeys. Does nothing when the tenant already has initiatives.")
	url := fs.String("url", "http://127.0.0.1:8080", "base URL of the running API")
	tenant := fs.String("tenant", "", "tenant id; required")
	tokenFile := fs.String("token-file", "", "file holding an access token with every permission; required")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	if *tenant == "" || *tokenFile == "" {
		return errors.New("--tenant and --token-file are required")
	}
	tok, err := os.ReadFile(*tokenFile)
	if err != nil {
		return err
	}
	client := demo.Client{BaseURL: *url, Tenant: *tenant, Token: strings.TrimSpace(string(tok)), HTTP: &http.Client{Timeout: 30 * time.Second}}
	res, err := demo.Seed(ctx, client, demo.Default(), time.Now().UTC())
	if err != nil {
		return fmt.Errorf("demo seed: %w", err)
	}
	if res.Skipped {
		fmt.Println("the tenant already has initiatives; demo seed skipped")
		return nil
	}
	fmt.Printf("seeded %d initiatives, %d benefits with %d actuals, %d costs, %d stakeholders with %d engagements\n",
		res.Initiatives, res.Benefits, res.Actuals, res.Costs, res.Stakeholders, res.Engagements)
	return nil
}
