//! What one response of a model service may send: the text, the number of
//! tool calls and each call's arguments, the bytes of one event still being
//! read, and the pace of the stream once it began. A service past a bound
//! ends the request with an error naming it, so memory stays within about
//! twice the bound whatever the service sends. Counts only; never reads the
//! network and never decides what a call may do.

use std::time::Duration;

use super::StreamEvent;

/// The bounds, from `[model]` settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StreamBounds {
    /// Bytes of answer text in one response.
    pub max_text_bytes: usize,
    /// Tool calls in one response.
    pub max_tool_calls: usize,
    /// Bytes of one call's arguments.
    pub max_argument_bytes: usize,
    /// Once the answer began, fewer than this many bytes in any window of
    /// `request_timeout` is a stall.
    pub stall_min_bytes: usize,
}

impl StreamBounds {
    pub const DEFAULT_MAX_TEXT_BYTES: usize = 8 << 20;
    pub const DEFAULT_MAX_TOOL_CALLS: usize = 64;
    pub const DEFAULT_MAX_ARGUMENT_BYTES: usize = 1 << 20;
    pub const DEFAULT_STALL_MIN_BYTES: usize = 64;

    /// Bytes of the body read since the last whole event: what the event
    /// parser may hold. One event carries at most a whole call's arguments
    /// or a piece of text, escaped as JSON (at most 6 bytes a character).
    pub fn max_pending_event_bytes(&self) -> usize {
        self.max_text_bytes
            .max(self.max_argument_bytes)
            .saturating_mul(2)
            .max(1 << 20)
    }
}

impl Default for StreamBounds {
    fn default() -> Self {
        Self {
            max_text_bytes: Self::DEFAULT_MAX_TEXT_BYTES,
            max_tool_calls: Self::DEFAULT_MAX_TOOL_CALLS,
            max_argument_bytes: Self::DEFAULT_MAX_ARGUMENT_BYTES,
            stall_min_bytes: Self::DEFAULT_STALL_MIN_BYTES,
        }
    }
}

/// Which bound a response went past, with its setting's name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bound {
    Text,
    ToolCalls,
    Arguments,
    PendingEvent,
}

impl Bound {
    /// What the error says went past and the setting that raises it.
    pub fn words(self) -> (&'static str, &'static str) {
        match self {
            Bound::Text => ("bytes of answer text", "max_response_text_bytes"),
            Bound::ToolCalls => ("tool calls", "max_tool_calls"),
            Bound::Arguments => ("bytes of one call's arguments", "max_tool_argument_bytes"),
            Bound::PendingEvent => ("bytes in one event", "max_response_text_bytes"),
        }
    }
}

/// What one response sent so far, checked event by event.
#[derive(Debug, Default)]
pub struct Tally {
    text_bytes: usize,
    /// Each call's arguments bytes, by its index in the response.
    argument_bytes: Vec<usize>,
}

impl Tally {
    /// Counts `event`; the bound it goes past, and the bound's value.
    pub fn count(
        &mut self,
        bounds: &StreamBounds,
        event: &StreamEvent,
    ) -> Result<(), (Bound, usize)> {
        match event {
            StreamEvent::TextDelta(text) => {
                self.text_bytes = self.text_bytes.saturating_add(text.len());
                if self.text_bytes > bounds.max_text_bytes {
                    return Err((Bound::Text, bounds.max_text_bytes));
                }
            }
            StreamEvent::ToolCallStart { index, .. } => {
                // An index is a place in the response: one past the bound is
                // a call past it, however few came before.
                if *index >= bounds.max_tool_calls {
                    return Err((Bound::ToolCalls, bounds.max_tool_calls));
                }
                if self.argument_bytes.len() <= *index {
                    self.argument_bytes.resize(*index + 1, 0);
                }
            }
            StreamEvent::ToolCallDelta { index, arguments } => {
                self.arguments(bounds, *index, arguments.len(), true)?;
            }
            StreamEvent::ToolCallArguments { index, arguments } => {
                self.arguments(bounds, *index, arguments.len(), false)?;
            }
            StreamEvent::Usage(_)
            | StreamEvent::Finish(_)
            | StreamEvent::Retrying { .. }
            | StreamEvent::Done => {}
        }
        Ok(())
    }

    fn arguments(
        &mut self,
        bounds: &StreamBounds,
        index: usize,
        len: usize,
        adds: bool,
    ) -> Result<(), (Bound, usize)> {
        let Some(bytes) = self.argument_bytes.get_mut(index) else {
            // A piece for a call that never started is dropped by the
            // response; it holds nothing.
            return Ok(());
        };
        *bytes = if adds { bytes.saturating_add(len) } else { len };
        if *bytes > bounds.max_argument_bytes {
            return Err((Bound::Arguments, bounds.max_argument_bytes));
        }
        Ok(())
    }
}

/// The pace of a stream after its first byte: a window of `window` opens,
/// and closes early once `min_bytes` arrived; a window that ends with fewer
/// is a stall. A trickle of a byte now and then is therefore a stall, not
/// only silence.
#[derive(Debug)]
pub struct Pace {
    window: Duration,
    min_bytes: usize,
    opened: tokio::time::Instant,
    bytes: usize,
}

impl Pace {
    pub fn new(window: Duration, min_bytes: usize) -> Self {
        Self {
            window,
            min_bytes,
            opened: tokio::time::Instant::now(),
            bytes: 0,
        }
    }

    /// When the open window ends.
    pub fn deadline(&self) -> tokio::time::Instant {
        self.opened + self.window
    }

    /// Opens a new window now (the first byte arrived).
    pub fn restart(&mut self) {
        self.opened = tokio::time::Instant::now();
        self.bytes = 0;
    }

    /// Whether nothing at all arrived in the open window.
    pub fn silent(&self) -> bool {
        self.bytes == 0
    }

    /// Counts `bytes` that just arrived.
    pub fn arrived(&mut self, bytes: usize) {
        self.bytes = self.bytes.saturating_add(bytes);
        if self.bytes >= self.min_bytes {
            self.opened = tokio::time::Instant::now();
            self.bytes = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn small() -> StreamBounds {
        StreamBounds {
            max_text_bytes: 10,
            max_tool_calls: 2,
            max_argument_bytes: 4,
            stall_min_bytes: 8,
        }
    }

    fn start(index: usize) -> StreamEvent {
        StreamEvent::ToolCallStart {
            index,
            id: format!("c{index}"),
            name: "read_file".into(),
        }
    }

    #[test]
    fn text_past_its_bound_is_refused() {
        let mut tally = Tally::default();
        let piece = StreamEvent::TextDelta("12345".into());
        assert_eq!(tally.count(&small(), &piece), Ok(()));
        assert_eq!(tally.count(&small(), &piece), Ok(()));
        assert_eq!(tally.count(&small(), &piece), Err((Bound::Text, 10)));
    }

    #[test]
    fn a_call_past_the_count_or_at_a_far_index_is_refused() {
        let mut tally = Tally::default();
        assert_eq!(tally.count(&small(), &start(0)), Ok(()));
        assert_eq!(tally.count(&small(), &start(1)), Ok(()));
        assert_eq!(tally.count(&small(), &start(2)), Err((Bound::ToolCalls, 2)));
        let mut tally = Tally::default();
        assert_eq!(
            tally.count(&small(), &start(usize::MAX)),
            Err((Bound::ToolCalls, 2))
        );
    }

    #[test]
    fn arguments_count_per_call_and_whole_arguments_replace() {
        let mut tally = Tally::default();
        let delta = |index, s: &str| StreamEvent::ToolCallDelta {
            index,
            arguments: s.into(),
        };
        assert_eq!(tally.count(&small(), &start(0)), Ok(()));
        assert_eq!(tally.count(&small(), &start(1)), Ok(()));
        assert_eq!(tally.count(&small(), &delta(0, "{\"")), Ok(()));
        assert_eq!(tally.count(&small(), &delta(1, "{\"a")), Ok(()));
        let whole = StreamEvent::ToolCallArguments {
            index: 0,
            arguments: "{}".into(),
        };
        assert_eq!(tally.count(&small(), &whole), Ok(()));
        assert_eq!(tally.count(&small(), &delta(0, "xx")), Ok(()));
        assert_eq!(
            tally.count(&small(), &delta(1, "\":")),
            Err((Bound::Arguments, 4))
        );
        // A piece for a call that never started holds nothing.
        assert_eq!(tally.count(&small(), &delta(7, "long long")), Ok(()));
    }

    #[tokio::test(start_paused = true)]
    async fn a_trickle_keeps_its_window_and_enough_bytes_open_a_new_one() {
        let mut pace = Pace::new(Duration::from_secs(60), 64);
        let first = pace.deadline();
        tokio::time::advance(Duration::from_secs(30)).await;
        pace.arrived(63);
        assert_eq!(pace.deadline(), first, "63 bytes do not open a new window");
        pace.arrived(1);
        assert_eq!(
            pace.deadline(),
            tokio::time::Instant::now() + Duration::from_secs(60)
        );
    }
}
