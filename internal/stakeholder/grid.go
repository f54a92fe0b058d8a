package stakeholder

import "slices"

// Quadrant is a stakeholder's place on the power–interest grid, which says
// how to treat them.
type Quadrant string

const (
	ManageClosely Quadrant = "manage_closely" // power and high interest
	KeepSatisfied Quadrant = "keep_satisfied" // power, less interest
	KeepInformed  Quadrant = "keep_informed"  // high interest, little power
	Monitor       Quadrant = "monitor"        // neither
)

// Quadrants lists every quadrant.
var Quadrants = []Quadrant{ManageClosely, KeepSatisfied, KeepInformed, Monitor}

// QuadrantOf places a stakeholder on the grid: power is influence high or
// critical; high interest is interest high (medium interest is not enough to
// call for active information).
func QuadrantOf(influence Influence, interest Interest) Quadrant {
	power, keen := influence.Powerful(), interest == InterestHigh
	switch {
	case power && keen:
		return ManageClosely
	case power:
		return KeepSatisfied
	case keen:
		return KeepInformed
	}
	return Monitor
}

// QuadrantMembers lists the influence and interest levels that QuadrantOf
// places in q, lowest first. Each quadrant is a rectangle of the grid (every
// combination of the two lists, and no other, lies in it: see the tests), so
// a list filters on a quadrant with two IN lists.
func QuadrantMembers(q Quadrant) ([]Influence, []Interest) {
	var influences []Influence
	var interests []Interest
	for _, inf := range Influences {
		for _, in := range Interests {
			if QuadrantOf(inf, in) != q {
				continue
			}
			if !slices.Contains(influences, inf) {
				influences = append(influences, inf)
			}
			if !slices.Contains(interests, in) {
				interests = append(interests, in)
			}
		}
	}
	return influences, interests
}
