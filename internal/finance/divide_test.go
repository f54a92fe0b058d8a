package finance

import (
	"math/rand/v2"
	"testing"

	"github.com/shopspring/decimal"
)

// divSmall must be the library's division, compacted, to the last digit and
// the same representation: amounts of every size and scale, both signs,
// the halfway cases, and the operands that fall back.
func TestDivSmallIsTheLibrarysDivision(t *testing.T) {
	r := rand.New(rand.NewPCG(20, 41))
	cases := []decimal.Decimal{decimal.Zero, decimal.New(1, 0), decimal.New(-1, 0), decimal.RequireFromString("12000"),
		decimal.RequireFromString("1000"), decimal.RequireFromString("0.0000000000000006"), decimal.RequireFromString("-0.0000000000000006"),
		decimal.RequireFromString("0.00000000000000006"), decimal.RequireFromString("123456789012345678"),
		decimal.RequireFromString("9223372036854775807"), decimal.RequireFromString("-9223372036854775808"),
		decimal.RequireFromString("1e30"), decimal.RequireFromString("5e3"), decimal.RequireFromString("0.000000000000002"),
		decimal.RequireFromString("24000"), decimal.RequireFromString("-24000.5"), decimal.RequireFromString("1500000"), decimal.New(12, 3), decimal.New(-999999999999999999, 3)}
	for range 20_000 {
		c := r.Int64N(1 << r.IntN(63))
		if r.IntN(2) == 0 {
			c = -c
		}
		cases = append(cases, decimal.New(c, int32(r.IntN(30)-20)))
	}
	for _, d := range cases {
		for _, n := range []int64{1, 3, 4, 6, 7, 12} {
			want := compact(d.Div(decimal.NewFromInt(n)))
			got := divSmall(d, n)
			if !got.Equal(want) || got.String() != want.String() || got.Exponent() != want.Exponent() {
				t.Fatalf("%s / %d = %s (exp %d), the library's %s (exp %d)", d, n, got, got.Exponent(), want, want.Exponent())
			}
		}
	}
}

func BenchmarkDivSmall(b *testing.B) {
	d := decimal.RequireFromString("1500000.25")
	b.Run("divSmall", func(b *testing.B) {
		for b.Loop() {
			divSmall(d, 12)
		}
	})
	b.Run("library", func(b *testing.B) {
		for b.Loop() {
			compact(d.Div(decimal.NewFromInt(12)))
		}
	})
}
