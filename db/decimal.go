package db

import (
	"fmt"

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

// Scan decodes the binary numeric with pgx's own plan, then takes its
// coefficient and exponent as they are (exact). NULL is an error, as
// decimal.Decimal's own Scan makes it (a nullable column scans into
// *decimal.Decimal, which pgx sets to nil for NULL before this); NaN and
// infinities, which no amount column admits, are errors too.
func (p scanDecimal) Scan(src []byte, dst any) error {
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
