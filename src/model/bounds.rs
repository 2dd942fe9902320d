//! What one response of a model service may send: the text, the number of
//! tool calls and each call's arguments, the bytes of one event still being
//! read, and the pace of the stream once it began. A service past a bound
//! ends the request with an error naming it, so memory stays within about
//! twice the bound whatever the service sends; except the bound on calls,
//! past which each call is kept as its id and name only (for the turn to
//! refuse), up to a hard cap on what those hold. Counts and sets aside;
//! never reads the network and never decides what a call may do.

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
    /// What a call past the bound costs besides its id and name: its place
    /// in the wire decoder's map, in the response and in history, and its
    /// refusal. So ids and names of one byte still make a hard cap.
    pub const PAST_BOUND_CALL_COST: usize = 64;

    /// The most the calls past the bound may hold together (their ids and
    /// names, and `PAST_BOUND_CALL_COST` each): what one call's arguments
    /// may hold, 1 MiB by default, so about 16,000 calls of short ids.
    pub fn max_past_bound_bytes(&self) -> usize {
        self.max_argument_bytes
    }

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
    /// The calls past the bound on calls, by what they hold.
    PastBoundCalls,
    PendingEvent,
}

impl Bound {
    /// What the error says went past and the setting that raises it.
    pub fn words(self) -> (&'static str, &'static str) {
        match self {
            Bound::Text => ("bytes of answer text", "max_response_text_bytes"),
            Bound::ToolCalls => ("tool calls", "max_tool_calls"),
            Bound::Arguments => ("bytes of one call's arguments", "max_tool_argument_bytes"),
            Bound::PastBoundCalls => (
                "bytes of tool calls past `max_tool_calls` (their ids and names, and 64 bytes a call)",
                "max_tool_argument_bytes",
            ),
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
    /// What the calls past the bound hold (`StreamBounds::PAST_BOUND_CALL_COST`).
    past_bound_bytes: usize,
}

impl Tally {
    /// Counts `event` and gives it back as the response keeps it: a call
    /// past the bound as `ToolCallPastBound`, a piece of its arguments not
    /// at all. Or the bound it goes past, and the bound's value.
    pub fn count(
        &mut self,
        bounds: &StreamBounds,
        event: StreamEvent,
    ) -> Result<Option<StreamEvent>, (Bound, usize)> {
        match &event {
            StreamEvent::TextDelta(text) => {
                self.text_bytes = self.text_bytes.saturating_add(text.len());
                if self.text_bytes > bounds.max_text_bytes {
                    return Err((Bound::Text, bounds.max_text_bytes));
                }
            }
            StreamEvent::ToolCallStart { index, .. } if *index >= bounds.max_tool_calls => {
                // An index is a place in the response: one past the bound is
                // a call past it, however few came before.
                return self.past_bound(bounds, event).map(Some);
            }
            StreamEvent::ToolCallStart { index, .. } => {
                if self.argument_bytes.len() <= *index {
                    self.argument_bytes.resize(*index + 1, 0);
                }
            }
            StreamEvent::ToolCallDelta { index, .. }
            | StreamEvent::ToolCallArguments { index, .. }
                if *index >= bounds.max_tool_calls =>
            {
                return Ok(None);
            }
            StreamEvent::ToolCallDelta { index, arguments } => {
                self.arguments(bounds, *index, arguments.len(), true)?;
            }
            StreamEvent::ToolCallArguments { index, arguments } => {
                self.arguments(bounds, *index, arguments.len(), false)?;
            }
            StreamEvent::ToolCallPastBound { .. }
            | StreamEvent::Usage(_)
            | StreamEvent::Finish(_)
            | StreamEvent::Retrying { .. }
            | StreamEvent::Done => {}
        }
        Ok(Some(event))
    }

    /// A call past the bound, kept as its id and name while what all of
    /// them hold stays under the hard cap.
    fn past_bound(
        &mut self,
        bounds: &StreamBounds,
        event: StreamEvent,
    ) -> Result<StreamEvent, (Bound, usize)> {
        let StreamEvent::ToolCallStart { id, name, .. } = event else {
            return Ok(event);
        };
        let holds = id
            .len()
            .saturating_add(name.len())
            .saturating_add(StreamBounds::PAST_BOUND_CALL_COST);
        self.past_bound_bytes = self.past_bound_bytes.saturating_add(holds);
        if self.past_bound_bytes > bounds.max_past_bound_bytes() {
            return Err((Bound::PastBoundCalls, bounds.max_past_bound_bytes()));
        }
        Ok(StreamEvent::ToolCallPastBound {
            bound: bounds.max_tool_calls,
            id,
            name,
        })
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

    /// `tally` counts `event` and keeps it as it was.
    fn kept(tally: &mut Tally, event: StreamEvent) -> Result<(), (Bound, usize)> {
        let back = tally.count(&small(), event.clone())?;
        assert_eq!(back, Some(event));
        Ok(())
    }

    #[test]
    fn text_past_its_bound_is_refused() {
        let mut tally = Tally::default();
        let piece = StreamEvent::TextDelta("12345".into());
        assert_eq!(kept(&mut tally, piece.clone()), Ok(()));
        assert_eq!(kept(&mut tally, piece.clone()), Ok(()));
        assert_eq!(kept(&mut tally, piece), Err((Bound::Text, 10)));
    }

    #[test]
    fn a_call_past_the_count_is_kept_as_its_id_and_name_and_its_pieces_dropped() {
        // Room for the ids and names of a few calls past the bound.
        let bounds = StreamBounds {
            max_argument_bytes: 1024,
            ..small()
        };
        let mut tally = Tally::default();
        for index in [0, 1] {
            assert_eq!(tally.count(&bounds, start(index)), Ok(Some(start(index))));
        }
        assert_eq!(
            tally.count(&bounds, start(2)),
            Ok(Some(StreamEvent::ToolCallPastBound {
                bound: 2,
                id: "c2".into(),
                name: "read_file".into(),
            }))
        );
        let piece = StreamEvent::ToolCallDelta {
            index: 2,
            arguments: "{\"path\": \"a long path past every bound\"}".into(),
        };
        assert_eq!(tally.count(&bounds, piece), Ok(None));
        let whole = StreamEvent::ToolCallArguments {
            index: usize::MAX,
            arguments: "{}".into(),
        };
        assert_eq!(tally.count(&bounds, whole), Ok(None));
        // A far index is a call past the bound too, never a place to fill.
        assert!(matches!(
            tally.count(&bounds, start(usize::MAX)),
            Ok(Some(StreamEvent::ToolCallPastBound { bound: 2, .. }))
        ));
    }

    #[test]
    fn the_calls_past_the_count_end_the_response_past_their_hard_cap() {
        // 4 bytes of arguments: the calls past the bound hold at most 4
        // bytes, less than one call's cost: the first past it ends it.
        let mut tally = Tally::default();
        assert_eq!(kept(&mut tally, start(0)), Ok(()));
        assert_eq!(kept(&mut tally, start(1)), Ok(()));
        assert_eq!(
            tally.count(&small(), start(2)),
            Err((Bound::PastBoundCalls, 4))
        );
        // At the default bounds, 10,000 calls of short ids fit and a
        // flood of calls with one-byte ids and names does not.
        let bounds = StreamBounds::default();
        let mut tally = Tally::default();
        for index in 0..10_000 {
            let call = StreamEvent::ToolCallStart {
                index,
                id: format!("call_{index}"),
                name: "read_file".into(),
            };
            assert!(tally.count(&bounds, call).is_ok(), "call {index}");
        }
        let mut tally = Tally::default();
        let refused = (0..1_000_000).find_map(|index| {
            let call = StreamEvent::ToolCallStart {
                index,
                id: "i".into(),
                name: "n".into(),
            };
            tally.count(&bounds, call).err().map(|bound| (index, bound))
        });
        assert_eq!(
            refused,
            Some((64 + (1 << 20) / 66, (Bound::PastBoundCalls, 1 << 20)))
        );
    }

    #[test]
    fn arguments_count_per_call_and_whole_arguments_replace() {
        let mut tally = Tally::default();
        let delta = |index, s: &str| StreamEvent::ToolCallDelta {
            index,
            arguments: s.into(),
        };
        assert_eq!(kept(&mut tally, start(0)), Ok(()));
        assert_eq!(kept(&mut tally, start(1)), Ok(()));
        assert_eq!(kept(&mut tally, delta(0, "{\"")), Ok(()));
        assert_eq!(kept(&mut tally, delta(1, "{\"a")), Ok(()));
        let whole = StreamEvent::ToolCallArguments {
            index: 0,
            arguments: "{}".into(),
        };
        assert_eq!(kept(&mut tally, whole), Ok(()));
        assert_eq!(kept(&mut tally, delta(0, "xx")), Ok(()));
        assert_eq!(
            kept(&mut tally, delta(1, "\":")),
            Err((Bound::Arguments, 4))
        );
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
