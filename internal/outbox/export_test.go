package outbox

import "context"

// ClaimDeliveries is one claim of the delivery lane (Batch events at most), for the tests of
// what a claim reads; it reports how many events it leased.
func (r *Relay) ClaimDeliveries(ctx context.Context) (int, error) {
	r.defaults()
	rows, err := r.claim(ctx, false, r.Batch)
	return len(rows), err
}

// Publish is the relay's publish of finished events, for the tests of what it reads.
func (r *Relay) Publish(ctx context.Context, seqs []int64) error {
	r.defaults()
	return r.publish(ctx, seqs)
}
