package money

import "math"

// Round rounds a money amount or a percentage to 2 decimals, half away from
// zero. It is for the JSON edge only: figures are computed on unrounded
// values. -0 becomes 0 so that a tiny negative never shows as "-0".
func Round(v float64) float64 {
	return math.Round(v*100)/100 + 0
}
