# syntax=docker/dockerfile:1
# One image for every role: `docker run IMAGE api|worker|migrate|tenant ...|token ...`.

FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod go mod download
COPY . .
RUN --mount=type=cache,target=/go/pkg/mod \
    --mount=type=cache,target=/root/.cache/go-build \
    CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/valuecase ./cmd/valuecase

# Debian slim rather than distroless: curl for the healthcheck, and room for the document
# converters (LibreOffice, poppler-utils) the export worker will need.
FROM debian:bookworm-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates curl tzdata \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --system --uid 10001 --user-group --home-dir /var/lib/valuecase --create-home valuecase \
 && mkdir -p /var/lib/valuecase/keys \
 && chown -R valuecase:valuecase /var/lib/valuecase \
 && chmod 700 /var/lib/valuecase/keys
COPY --from=build /out/valuecase /usr/local/bin/valuecase
USER valuecase:valuecase
WORKDIR /var/lib/valuecase
ENV HTTP_ADDR=0.0.0.0:8080 \
    AUTH_SIGNING_KEYS_DIR=/var/lib/valuecase/keys
EXPOSE 8080
ENTRYPOINT ["/usr/local/bin/valuecase"]
CMD ["api"]
