package render

import _ "embed"

// DejaVu Sans (Bitstream Vera licence, fonts/LICENSE) is embedded so the PDF
// renders every Latin, Greek and Cyrillic name (Zürich, Łódź) on any machine.
var (
	//go:embed fonts/DejaVuSans.ttf
	dejaVuSans []byte
	//go:embed fonts/DejaVuSans-Bold.ttf
	dejaVuSansBold []byte
)
