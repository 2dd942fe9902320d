//! Markdown tables: the cells collected while a table is parsed, then drawn
//! as rows padded to each column's width and joined by ` │ `, with a rule
//! under the header. Part of the markdown renderer; it never wraps.

use pulldown_cmark::Alignment;
use ratatui::style::Style;
use ratatui::text::Span;
use unicode_width::UnicodeWidthStr;

use super::{FRAME, Renderer, append};

/// A table is collected whole, then drawn with padded columns.
pub(super) struct Table {
    pub(super) alignments: Vec<Alignment>,
    pub(super) rows: Vec<Vec<Vec<Span<'static>>>>,
    pub(super) head_rows: usize,
}

impl Table {
    pub(super) fn cell(&mut self) -> Option<&mut Vec<Span<'static>>> {
        if self.rows.is_empty() {
            self.rows.push(Vec::new());
        }
        let row = self.rows.last_mut()?;
        if row.is_empty() {
            row.push(Vec::new());
        }
        row.last_mut()
    }
}

impl Renderer {
    /// Rows of cells padded to their column's width and joined by ` │ `,
    /// with a rule under the header.
    pub(super) fn draw_table(&mut self, table: Table) {
        let columns = table
            .rows
            .iter()
            .map(Vec::len)
            .max()
            .unwrap_or(0)
            .max(table.alignments.len());
        let mut widths = vec![0; columns];
        for row in &table.rows {
            for (width, cell) in widths.iter_mut().zip(row) {
                *width = (*width).max(spans_width(cell));
            }
        }
        for (index, row) in table.rows.iter().enumerate() {
            self.ensure_line();
            for (column, width) in widths.iter().enumerate() {
                if column > 0 {
                    self.push(" │ ", FRAME);
                }
                let cell = row.get(column).map(Vec::as_slice).unwrap_or(&[]);
                let pad = width.saturating_sub(spans_width(cell));
                let (left, right) = match table.alignments.get(column) {
                    Some(Alignment::Right) => (pad, 0),
                    Some(Alignment::Center) => (pad / 2, pad - pad / 2),
                    _ => (0, pad),
                };
                self.push(&" ".repeat(left), Style::new());
                for span in cell {
                    self.column += span.content.width();
                    if let Some(spans) = &mut self.current {
                        append(spans, span.clone());
                    }
                }
                if column + 1 < columns {
                    self.push(&" ".repeat(right), Style::new());
                }
            }
            self.finish_line();
            if index + 1 == table.head_rows {
                let rule: Vec<String> = widths.iter().map(|w| "─".repeat(*w)).collect();
                self.push(&rule.join("─┼─"), FRAME);
                self.finish_line();
            }
        }
    }
}

fn spans_width(spans: &[Span<'_>]) -> usize {
    spans.iter().map(|span| span.content.width()).sum()
}
