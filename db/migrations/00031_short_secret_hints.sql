-- +goose Up

-- A hint shows the last 4 characters of a secret only when it has at least 16 (secretbox.Hint):
-- of a shorter one, 4 characters give too much away. Hints stored before that rule are redone
-- from the sealed length (1 version byte + 12-byte nonce + text + 16-byte tag = text + 29 bytes).
-- A text of 16 to 63 bytes may still be under 16 characters when it is not ASCII: such a hint
-- (one with a multi-byte character in it) is blanked too. Webhook secrets were never shorter
-- than 16 characters.
UPDATE integrations SET token_hint = '****'
WHERE token_sealed IS NOT NULL AND token_hint <> '****'
  AND (octet_length(token_sealed) - 29 < 16
       OR (octet_length(token_sealed) - 29 < 64 AND octet_length(token_hint) <> length(token_hint)));

-- +goose Down
-- The hidden characters are not recoverable from the hint: nothing to undo.
SELECT 1;
