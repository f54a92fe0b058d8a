// Package client is a Go client of the Valuecase API, generated from api/openapi.yaml by
// oapi-codegen (the version pinned as a tool in go.mod). Do not edit client.gen.go:
// regenerate it with `make generate` (or `go generate ./api/client`) whenever the document
// changes; `make check` fails while it is stale.
package client

//go:generate go tool oapi-codegen -config oapi-codegen.yaml -o client.gen.go ../openapi.yaml
