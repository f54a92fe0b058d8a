package db

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/shopspring/decimal"
)

// registerDecimal teaches a connection to read PostgreSQL's binary numeric
// straight into github.com/shopspring/decimal values (sqlc maps numeric to
// them: money is exact end to end). Without it pgx goes through the type's
// sql.Scanner, formatting every value as text and parsing it back: a fifth
// of a portfolio analysis' CPU. Writes keep the driver.Valuer (text) path.
func registerDecimal(conn *pgx.Conn) {
	m := conn.TypeMap()
	t := &pgtype.Type{Name: "numeric", OID: pgtype.NumericOID, Codec: decimalCodec{}}
	m.RegisterType(t)
	// The array type holds its element type: register it again over the new one.
	m.RegisterType(&pgtype.Type{Name: "_numeric", OID: pgtype.NumericArrayOID, Codec: &pgtype.ArrayCodec{ElementType: t}})
}

// decimalCodec is pgx's NumericCodec plus a binary scan plan for decimal.Decimal.
type decimalCodec struct{ pgtype.NumericCodec }

func (c decimalCodec) PlanScan(m *pgtype.Map, oid uint32, format int16, target any) pgtype.ScanPlan {
	if _, ok := target.(*decimal.Decimal); ok && format == pgtype.BinaryFormatCode {
		return scanDecimal{numeric: c.NumericCodec.PlanScan(m, oid, format, &pgtype.Numeric{})}
	}
	return c.NumericCodec.PlanScan(m, oid, format, target)
}

type scanDecimal struct{ numeric pgtype.ScanPlan }

// Scan decodes the binary numeric: in int64 arithmetic when its coefficient
// fits (decodeSmallNumeric: every amount a benefit or a cost holds), else
// with pgx's own plan; either way the coefficient and exponent pgx's plan
// gives (exact). NULL is an error, as decimal.Decimal's own Scan makes it (a
// nullable column scans into *decimal.Decimal, which pgx sets to nil for
// NULL before this); NaN and infinities, which no amount column admits, are
// errors too.
func (p scanDecimal) Scan(src []byte, dst any) error {
	if d, ok := decodeSmallNumeric(src); ok {
		*dst.(*decimal.Decimal) = d
		return nil
	}
	var n pgtype.Numeric
	if err := p.numeric.Scan(src, &n); err != nil {
		return err
	}
	switch {
	case !n.Valid:
		return fmt.Errorf("cannot scan NULL into a decimal")
	case n.NaN || n.InfinityModifier != pgtype.Finite:
		return fmt.Errorf("cannot scan NaN or infinity into a decimal")
	}
	*dst.(*decimal.Decimal) = decimal.NewFromBigInt(n.Int, n.Exp)
	return nil
}

// Signs of PostgreSQL's binary numeric (src/backend/utils/adt/numeric.c).
const (
	numericPositive = 0x0000
	numericNegative = 0x4000
)

// decodeSmallNumeric is pgx's binary numeric decoding (pgtype's
// scanPlanBinaryNumericToNumericScanner, then decimal.NewFromBigInt) for a
// finite value of at most four base-10000 digits whose coefficient stays an
// int64: the same coefficient and exponent, without a big.Int per step (a
// portfolio reads tens of thousands of amounts). ok is false for anything
// else, which the caller decodes with pgx's plan.
func decodeSmallNumeric(src []byte) (decimal.Decimal, bool) {
	if len(src) < 8 {
		return decimal.Decimal{}, false
	}
	ndigits := int(binary.BigEndian.Uint16(src))
	weight := int32(int16(binary.BigEndian.Uint16(src[2:])))
	sign := binary.BigEndian.Uint16(src[4:])
	dscale := int(int16(binary.BigEndian.Uint16(src[6:])))
	if (sign != numericPositive && sign != numericNegative) || ndigits > 4 || len(src) != 8+2*ndigits {
		return decimal.Decimal{}, false
	}
	if ndigits == 0 {
		return decimal.New(0, 0), true
	}
	var accum int64 // < 10000^4
	for i := range ndigits {
		accum = accum*10000 + int64(binary.BigEndian.Uint16(src[8+2*i:]))
	}
	exp := (weight - int32(ndigits) + 1) * 4
	if dscale > 0 {
		fracDecimalDigits := (ndigits - int(weight) - 1) * 4
		for ; dscale > fracDecimalDigits; fracDecimalDigits++ {
			if accum > math.MaxInt64/10 {
				return decimal.Decimal{}, false
			}
			accum *= 10
			exp--
		}
		for ; dscale < fracDecimalDigits; fracDecimalDigits-- {
			accum /= 10
			exp++
		}
	}
	if exp >= 0 && accum != 0 {
		for accum%10 == 0 {
			accum /= 10
			exp++
		}
	}
	if sign == numericNegative {
		accum = -accum
	}
	return decimal.New(accum, exp), true
}
