package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/valuecase/valuecase/internal/auth"
)

// keyReloadEvery is how often a running API re-reads AUTH_SIGNING_KEYS_DIR;
// it is shorter than auth.KeyActivationDelay, so every instance publishes and
// verifies a new key before any instance signs with it.
const keyReloadEvery = 30 * time.Second

func reloadKeys(ctx context.Context, keys *auth.KeyStore, log *slog.Logger) {
	tick := time.NewTicker(keyReloadEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			if err := keys.Reload(); err != nil {
				log.Warn("reloading signing keys", "error", err)
			}
		}
	}
}

const keysHelp = `Manages the service's own Ed25519 token signing keys in AUTH_SIGNING_KEYS_DIR.

  valuecase keys rotate   add a new key; running APIs publish it at once (JWKS) and sign with it
                          after %s; tokens of the older keys stay valid while those keys remain
  valuecase keys list     print each key as a JSON line: kid, created, signing
  valuecase keys prune    delete keys whose successor has signed for longer than --retired-for
                          (default 24h: longer than any access token lives); never the newest key
`

func runKeys(args []string) error {
	if len(args) == 0 || (args[0] != "rotate" && args[0] != "list" && args[0] != "prune") {
		fmt.Fprintf(os.Stderr, keysHelp, auth.KeyActivationDelay)
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help") {
			return flag.ErrHelp
		}
		return errors.New("keys needs rotate, list or prune")
	}
	fs := flags("keys "+args[0], fmt.Sprintf(keysHelp, auth.KeyActivationDelay))
	retiredFor := fs.Duration("retired-for", 24*time.Hour, "prune: how long a key's successor must have been signing")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	cfg, err := loadConfig()
	if err != nil {
		return err
	}
	dir := cfg.AuthSigningKeysDir
	enc := json.NewEncoder(os.Stdout)
	switch args[0] {
	case "rotate":
		if _, err := auth.LoadKeyStore(dir); err != nil { // creates the directory and a first key if need be
			return err
		}
		kid, err := auth.GenerateKey(dir)
		if err != nil {
			return err
		}
		return enc.Encode(map[string]any{"kid": kid, "signs_from": time.Now().Add(auth.KeyActivationDelay).UTC().Format(time.RFC3339)})
	case "prune":
		if *retiredFor < time.Hour {
			return errors.New("--retired-for must be at least 1h (the access-token lifetime)")
		}
		removed, err := auth.PruneKeys(dir, auth.KeyActivationDelay, *retiredFor, time.Now())
		for _, kid := range removed {
			_ = enc.Encode(map[string]string{"removed": kid})
		}
		return err
	}
	keys, err := auth.LoadKeyStore(dir)
	if err != nil {
		return err
	}
	keys.ActivationDelay = auth.KeyActivationDelay
	for _, k := range keys.Keys() {
		_ = enc.Encode(k)
	}
	return nil
}
