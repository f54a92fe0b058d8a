package render

import (
	"bytes"
	"fmt"

	"github.com/xuri/excelize/v2"
)

// A native chart in a DOCX or PPTX carries its data twice: cached in the
// chart part (what a viewer draws) and in an embedded workbook (what
// "Edit Data" opens in PowerPoint, Word or LibreOffice). The chart's series
// refer to the workbook's cells (Sheet1!$B$2:$B$37), so both hold the same
// numbers, written from the same values.

// chartPart is a chart's DrawingML and its workbook's first sheet, row by
// row: strings, float64, monthCell, dayCell or nil (an empty cell, a gap).
type chartPart struct {
	XML   string
	Sheet [][]any
}

// monthCell and dayCell are spreadsheet date serials shown as a month
// (Jun 2028) or a day (30 Jun 2028).
type (
	monthCell float64
	dayCell   float64
)

func cellValue(v *float64) any {
	if v == nil {
		return nil
	}
	return *v
}

// relPackage is the relationship from a chart to its embedded workbook.
const (
	relPackage = "http://schemas.openxmlformats.org/officeDocument/2006/relationships/package"
	ctXLSX     = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
)

// workbook writes sheet as an .xlsx whose first sheet is Sheet1.
func workbook(sheet [][]any) ([]byte, error) {
	f := excelize.NewFile()
	defer f.Close()
	month, err := f.NewStyle(&excelize.Style{CustomNumFmt: new("mmm yyyy")})
	if err != nil {
		return nil, err
	}
	day, err := f.NewStyle(&excelize.Style{CustomNumFmt: new("d mmm yyyy")})
	if err != nil {
		return nil, err
	}
	for r, row := range sheet {
		for c, v := range row {
			cell, err := excelize.CoordinatesToCellName(c+1, r+1)
			if err != nil {
				return nil, err
			}
			style := 0
			switch x := v.(type) {
			case nil:
				continue
			case monthCell:
				v, style = float64(x), month
			case dayCell:
				v, style = float64(x), day
			case string, float64:
			default:
				return nil, fmt.Errorf("workbook cell %s: unexpected %T", cell, v)
			}
			if err := f.SetCellValue("Sheet1", cell, v); err != nil {
				return nil, err
			}
			if style != 0 {
				if err := f.SetCellStyle("Sheet1", cell, cell, style); err != nil {
					return nil, err
				}
			}
		}
	}
	var buf bytes.Buffer
	if err := f.Write(&buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// addCharts writes the chart parts under dir (word, ppt): each chart, its
// relationship to its workbook and the workbook.
func (p *pkg) addCharts(dir string, charts []chartPart) {
	for i, c := range charts {
		n := i + 1
		xlsx, err := workbook(c.Sheet)
		if err != nil {
			if p.err == nil {
				p.err = fmt.Errorf("chart %d workbook: %w", n, err)
			}
			return
		}
		p.add(fmt.Sprintf("%s/charts/chart%d.xml", dir, n), c.XML)
		p.add(fmt.Sprintf("%s/charts/_rels/chart%d.xml.rels", dir, n),
			rels([3]string{"rId1", relPackage, fmt.Sprintf("../embeddings/chart%d_data.xlsx", n)}))
		p.add(fmt.Sprintf("%s/embeddings/chart%d_data.xlsx", dir, n), string(xlsx))
	}
}
