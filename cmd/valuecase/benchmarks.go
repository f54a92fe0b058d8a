package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"

	"github.com/jackc/pgx/v5"

	"github.com/valuecase/valuecase/db"
	"github.com/valuecase/valuecase/db/dbsqlc"
	"github.com/valuecase/valuecase/internal/analytics"
)

const benchmarksHelp = `Loads a peer dataset for GET /v1/analytics/benchmarks from a CSV file (UTF-8, comma-separated,
RFC 4180 quoting) whose first line is exactly

  industry,metric,value,source,year

then one peer value a line: industry (compared trimmed, lower case; 1-100 characters), metric
(roi_percent, payback_months, realization_rate or npv_per_initiative), value (a finite number in
the metric's unit: percent, months, percent, base-currency amount), source (the publication or
survey, 1-200 characters) and year (2000-2100). At most 100,000 rows and 10 MiB. Every line is
checked first: one bad line imports nothing and the first 20 bad lines are named. The import
replaces every row of each source the file names, in one transaction, and prints
{"rows": N, "replaced": N, "sources": [...]}.`

// benchmarkImport is what an import did.
type benchmarkImport struct {
	Rows     int64    `json:"rows"`
	Replaced int64    `json:"replaced"`
	Sources  []string `json:"sources"`
}

func runBenchmarks(ctx context.Context, args []string) error {
	if len(args) == 0 || args[0] != "import" {
		fmt.Fprintln(os.Stderr, "Usage: valuecase benchmarks import FILE.csv")
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help") {
			return flag.ErrHelp
		}
		return errors.New("benchmarks needs import FILE.csv")
	}
	fs := flags("benchmarks import FILE.csv", benchmarksHelp)
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return errors.New("benchmarks import needs exactly one FILE.csv")
	}
	f, err := os.Open(fs.Arg(0))
	if err != nil {
		return err
	}
	defer f.Close()
	cfg, err := loadConfig()
	if err != nil {
		return err
	}
	pool, err := db.NewPool(ctx, cfg.DatabaseURL)
	if err != nil {
		return err
	}
	defer pool.Close()
	done, err := importBenchmarks(ctx, pool, f)
	if err != nil {
		return fmt.Errorf("%s: %w", fs.Arg(0), err)
	}
	return json.NewEncoder(os.Stdout).Encode(done)
}

// importBenchmarks validates the whole file, then replaces the rows of its
// sources in one transaction.
func importBenchmarks(ctx context.Context, b db.Beginner, r io.Reader) (benchmarkImport, error) {
	rows, err := analytics.ParseDataset(r)
	if err != nil {
		return benchmarkImport{}, err
	}
	p := dbsqlc.PeerDatasetInsertParams{}
	sources := map[string]bool{}
	for _, row := range rows {
		p.Industries, p.Metrics, p.PeerValues = append(p.Industries, row.Industry), append(p.Metrics, row.Metric), append(p.PeerValues, row.Value)
		p.Sources, p.Years = append(p.Sources, row.Source), append(p.Years, int32(row.Year))
		sources[row.Source] = true
	}
	out := benchmarkImport{Sources: slices.Sorted(maps.Keys(sources))}
	tx, err := b.BeginTx(ctx, pgx.TxOptions{})
	if err != nil {
		return out, err
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	err = func(tx pgx.Tx) error {
		if out.Replaced, err = db.Q.PeerDatasetDeleteSources(ctx, tx, out.Sources); err != nil {
			return err
		}
		if out.Rows, err = db.Q.PeerDatasetInsert(ctx, tx, p); err != nil {
			return err
		}
		return tx.Commit(ctx)
	}(tx)
	return out, err
}
