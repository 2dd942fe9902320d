//! Server-sent events over a response body, incrementally: a stall (too few
//! bytes in a window) ends it, so does a response past its bounds (text,
//! arguments, one event's bytes, what the calls past the bound on calls
//! hold; each of those comes as its id and name only); one wire-format
//! `Decoder` turning events into `StreamEvent`s, and the rule that a stream
//! ends after `Done` or its first error. Never knows a wire format's field
//! names and never panics on any input.

use std::collections::VecDeque;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use futures_util::{FutureExt, Stream, StreamExt, stream};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::bounds::{Bound, Pace, Tally};
use super::http::{Answered, HttpEndpoint, Posted, clip, describe};
pub use super::sse_parse::Event;
use super::sse_parse::Parser;
use super::{EventStream, ModelError, StreamEvent};

/// Why a wire format could not make sense of an event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WireError {
    /// The event's data is not what the format promises.
    Malformed { event: String, message: String },
    /// The service reported a failure inside the stream.
    Service(String),
}

/// One wire format's reading of its events. Events it does not know are
/// ignored; it pushes `StreamEvent::Done` when its completion event arrives.
pub trait Decoder: Send + 'static {
    /// The event that completes a response, for error texts.
    fn completion_event(&self) -> &'static str;

    fn decode(&mut self, event: &Event, out: &mut VecDeque<StreamEvent>) -> Result<(), WireError>;

    /// The body ended without the completion event. A format may still
    /// consider the response whole (and push `Done`); by default it broke.
    fn body_ended(&mut self, _out: &mut VecDeque<StreamEvent>) -> bool {
        false
    }
}

/// The JSON in an event's data, or `Malformed` naming the event.
pub fn json_data(event: &Event) -> Result<Value, WireError> {
    serde_json::from_str(&event.data).map_err(|err| WireError::Malformed {
        event: event_name(event).to_string(),
        message: format!(
            "its data is not valid JSON ({err}): {}",
            clip(&event.data, 120)
        ),
    })
}

/// The event's name: the `event:` field, or `message` when none was sent.
pub fn event_name(event: &Event) -> &str {
    if event.event.is_empty() {
        "message"
    } else {
        &event.event
    }
}

type Events = Pin<Box<dyn Stream<Item = Result<Event, ModelError>> + Send>>;

/// POSTs `body` to `endpoint` and streams what `decoder` makes of the
/// answer. Dropping the stream drops the connection.
pub fn stream_request<D: Decoder>(
    endpoint: Arc<HttpEndpoint>,
    body: Value,
    decoder: D,
    cancel: CancellationToken,
) -> EventStream {
    let driver = Driver {
        endpoint,
        body,
        events: None,
        decoder,
        queue: VecDeque::new(),
        tally: Tally::default(),
        cancel,
        finished: false,
        retries: 0,
        wait: None,
    };
    Box::pin(stream::unfold(driver, Driver::step))
}

struct Driver<D> {
    endpoint: Arc<HttpEndpoint>,
    body: Value,
    events: Option<Events>,
    decoder: D,
    queue: VecDeque<StreamEvent>,
    /// What the response sent so far, against the endpoint's bounds.
    tally: Tally,
    cancel: CancellationToken,
    finished: bool,
    /// Retries made before the answer's head came.
    retries: u32,
    /// The wait before the next try, after a `Retrying` event.
    wait: Option<std::time::Duration>,
}

type Step<D> = Option<(Result<StreamEvent, ModelError>, Driver<D>)>;

impl<D: Decoder> Driver<D> {
    async fn step(mut self) -> Step<D> {
        if self.finished {
            return None;
        }
        loop {
            if self.cancel.is_cancelled() {
                return self.fail(ModelError::Cancelled);
            }
            if let Some(event) = self.queue.pop_front() {
                let event = match self.tally.count(self.endpoint.bounds(), event) {
                    Ok(Some(event)) => event,
                    // A piece of a call past the bound: nothing keeps it.
                    Ok(None) => continue,
                    Err((bound, limit)) => {
                        let error = self.endpoint.too_large(bound, limit);
                        return self.fail(error);
                    }
                };
                if event == StreamEvent::Done {
                    self.finished = true;
                    self.queue.clear();
                }
                return Some((Ok(event), self));
            }
            let cancel = self.cancel.clone();
            let Some(events) = self.events.as_mut() else {
                if let Some(delay) = self.wait.take() {
                    tokio::select! {
                        biased;
                        () = cancel.cancelled() => return self.fail(ModelError::Cancelled),
                        () = tokio::time::sleep(delay) => {}
                    }
                }
                let bytes = match serde_json::to_vec(&self.body) {
                    Ok(bytes) => bytes,
                    Err(err) => {
                        let error =
                            ModelError::Setup(format!("cannot encode the request body: {err}"));
                        return self.fail(error);
                    }
                };
                match self.endpoint.post_once(bytes, self.retries, &cancel).await {
                    Ok(Posted::Answered(answered)) => {
                        let events = sse_events(&self.endpoint, answered);
                        self.events = Some(events);
                        continue;
                    }
                    Ok(Posted::Retry { delay, reason }) => {
                        self.retries += 1;
                        self.wait = Some(delay);
                        return Some((Ok(StreamEvent::Retrying { delay, reason }), self));
                    }
                    Err(error) => return self.fail(error),
                }
            };
            let next = tokio::select! {
                biased;
                () = cancel.cancelled() => None,
                next = events.next() => Some(next),
            };
            let Some(next) = next else {
                return self.fail(ModelError::Cancelled);
            };
            let result = match next {
                Some(Ok(event)) => self.decoder.decode(&event, &mut self.queue),
                Some(Err(error)) => return self.fail(error),
                None => {
                    if self.decoder.body_ended(&mut self.queue)
                        && self.queue.contains(&StreamEvent::Done)
                    {
                        continue;
                    }
                    let error = self.broken(format!(
                        "the body ended before the `{}` event",
                        self.decoder.completion_event()
                    ));
                    return self.fail(error);
                }
            };
            if let Err(error) = result {
                let error = match error {
                    WireError::Malformed { event, message } => ModelError::Malformed {
                        service: self.endpoint.service().to_string(),
                        message: self
                            .endpoint
                            .redact(&format!("the `{event}` event: {message}")),
                    },
                    WireError::Service(message) => self.broken(format!(
                        "the service reported an error: {}",
                        self.endpoint.redact(&message)
                    )),
                };
                return self.fail(error);
            }
        }
    }

    fn broken(&self, message: String) -> ModelError {
        ModelError::Broken {
            service: self.endpoint.service().to_string(),
            message,
        }
    }

    /// Ends the stream with `error`; the connection goes with it.
    fn fail(mut self, error: ModelError) -> Step<D> {
        self.finished = true;
        self.events = None;
        self.queue.clear();
        Some((Err(error), self))
    }
}

/// The response body as SSE events: the first read bounded by the
/// first-byte deadline, the later ones by the pace (`Pace`), and the bytes
/// read since the last whole event by the bounds, so that one endless event
/// cannot fill memory before any of it is decoded.
fn sse_events(endpoint: &HttpEndpoint, answered: Answered) -> Events {
    let pending = Arc::new(AtomicUsize::new(0));
    let reader = BodyReader {
        bytes: Box::pin(answered.response.bytes_stream()),
        first_read: None,
        last_read: None,
        read_bytes: 0,
        paced: 0,
        first_byte_deadline: Some(answered.first_byte_deadline),
        pace: Pace::new(
            endpoint.request_timeout(),
            endpoint.bounds().stall_min_bytes,
        ),
        pending: Arc::clone(&pending),
        max_pending: endpoint.bounds().max_pending_event_bytes(),
        no_first_byte: endpoint.no_first_byte(),
        stalled: endpoint.stalled(),
        trickle: endpoint.trickle(),
        too_large: endpoint.too_large(
            Bound::PendingEvent,
            endpoint.bounds().max_pending_event_bytes(),
        ),
        service: endpoint.service().to_string(),
    };
    let guarded = stream::unfold(Some(reader), |state| async move {
        let mut reader = state?;
        match reader.next().await {
            Some(Ok(chunk)) => Some((Ok(chunk), Some(reader))),
            Some(Err(error)) => Some((Err(error), None)),
            None => None,
        }
    });
    let service = endpoint.service().to_string();
    // The parser reads each byte once however the body is cut (see
    // `sse_parse`); an event is handed on as soon as its chunk is read.
    let parsed = stream::unfold(
        (Box::pin(guarded), Parser::default(), VecDeque::new(), false),
        move |(mut body, mut parser, mut ready, mut done)| {
            let (pending, service) = (Arc::clone(&pending), service.clone());
            async move {
                loop {
                    if let Some(event) = ready.pop_front() {
                        // A whole event: what the parser held for it is handed on.
                        pending.store(0, Ordering::Relaxed);
                        return Some((Ok(event), (body, parser, ready, done)));
                    }
                    if done {
                        return None;
                    }
                    match body.next().await {
                        Some(Ok(chunk)) => {
                            let mut out = Vec::new();
                            if let Err(err) = parser.feed(chunk.as_ref(), &mut out) {
                                let error = ModelError::Malformed {
                                    service,
                                    message: err.to_string(),
                                };
                                return Some((Err(error), (body, parser, ready, true)));
                            }
                            ready.extend(out);
                        }
                        Some(Err(error)) => {
                            return Some((Err(error), (body, parser, ready, true)));
                        }
                        None => done = true,
                    }
                }
            }
        },
    );
    Box::pin(parsed)
}

/// How a streamed body is read. An answer comes a packet per piece: read
/// as each came, every piece cost a wake-up, a system call, an
/// acknowledgement sent back and a pass of the whole reading, though the
/// screen shows them a frame (50 ms) at a time. So a read waits until about
/// `READ_TOGETHER` bytes should have come at the rate the response has come
/// so far, at most `READ_PACE_MAX` after the last read. A fast response is
/// not held: a wait shorter than `READ_PACE_MIN` is not waited, and what
/// has come already is read at once. The first `READ_AT_ONCE` bytes of a
/// response (a first piece often comes right after a piece that says
/// nothing to show) and the first read after a quiet spell are read at
/// once, so a first piece is never held.
const READ_TOGETHER: u32 = 2048;
const READ_PACE_MAX: std::time::Duration = std::time::Duration::from_millis(50);
const READ_PACE_MIN: std::time::Duration = std::time::Duration::from_millis(5);
const READ_AT_ONCE: usize = 1024;

/// Reads the body chunk by chunk under its deadlines and bounds.
struct BodyReader<S> {
    bytes: Pin<Box<S>>,
    /// When the first chunk came.
    first_read: Option<tokio::time::Instant>,
    /// When the last chunk came.
    last_read: Option<tokio::time::Instant>,
    /// Bytes read so far.
    read_bytes: usize,
    /// Reads that waited for the pace.
    paced: u64,
    /// Until the first chunk.
    first_byte_deadline: Option<tokio::time::Instant>,
    pace: Pace,
    /// Bytes read since the event parser last handed on a whole event.
    pending: Arc<AtomicUsize>,
    max_pending: usize,
    no_first_byte: ModelError,
    stalled: ModelError,
    trickle: ModelError,
    too_large: ModelError,
    service: String,
}

impl<S, B> BodyReader<S>
where
    S: Stream<Item = reqwest::Result<B>>,
    B: AsRef<[u8]>,
{
    async fn next(&mut self) -> Option<Result<B, ModelError>> {
        if let Some(due) = self.due()
            && tokio::time::Instant::now() < due
        {
            // What has come already is read at once (the connection's task
            // gets its turn to hand on the next chunk it holds); only waiting
            // for more waits for the pace.
            tokio::task::yield_now().await;
            if let Some(read) = self.bytes.next().now_or_never() {
                return self.took(read);
            }
            self.paced += 1;
            // Never past the window's end: a read that came after it would
            // count for a window that had already failed, and a trickle
            // that always sends something within the pace would never end.
            tokio::time::sleep_until(due.min(self.deadline())).await;
        }
        let deadline = self.deadline();
        let read = match tokio::time::timeout_at(deadline, self.bytes.next()).await {
            Err(_elapsed) => {
                let late = if self.first_byte_deadline.is_some() {
                    &self.no_first_byte
                } else if self.pace.silent() {
                    &self.stalled
                } else {
                    &self.trickle
                };
                return Some(Err(late.clone()));
            }
            Ok(read) => read,
        };
        self.took(read)
    }

    /// When the read waited for now fails: the first-byte deadline, then
    /// the end of the pace's window.
    fn deadline(&self) -> tokio::time::Instant {
        self.first_byte_deadline
            .unwrap_or_else(|| self.pace.deadline())
    }

    /// When the next read is due, if it waits at all (see `READ_TOGETHER`).
    fn due(&self) -> Option<tokio::time::Instant> {
        let (first, last) = (self.first_read?, self.last_read?);
        if self.read_bytes < READ_AT_ONCE {
            return None;
        }
        // The time `READ_TOGETHER` bytes took so far, on average.
        let together = u32::try_from(self.read_bytes).map_or(std::time::Duration::ZERO, |read| {
            (last - first).mul_f64(f64::from(READ_TOGETHER) / f64::from(read))
        });
        let wait = together.min(READ_PACE_MAX);
        (wait >= READ_PACE_MIN).then(|| last + wait)
    }

    /// A read's outcome: the chunk counted against the pace and the bounds,
    /// or the error it ends with.
    fn took(&mut self, read: Option<reqwest::Result<B>>) -> Option<Result<B, ModelError>> {
        let chunk = match read? {
            Ok(chunk) => chunk,
            Err(err) => {
                let message = describe(&err.without_url());
                let service = self.service.clone();
                return Some(Err(ModelError::Broken { service, message }));
            }
        };
        if self.first_byte_deadline.take().is_some() {
            self.pace.restart();
        }
        let now = tokio::time::Instant::now();
        self.first_read.get_or_insert(now);
        self.last_read = Some(now);
        let len = chunk.as_ref().len();
        self.read_bytes = self.read_bytes.saturating_add(len);
        self.pace.arrived(len);
        let pending = self.pending.fetch_add(len, Ordering::Relaxed) + len;
        if pending > self.max_pending {
            return Some(Err(self.too_large.clone()));
        }
        Some(Ok(chunk))
    }
}

/// Pushes the accumulated usage (when any) and `Done`.
pub fn finish(usage: Option<super::Usage>, out: &mut VecDeque<StreamEvent>) {
    if let Some(usage) = usage {
        out.push_back(StreamEvent::Usage(usage));
    }
    out.push_back(StreamEvent::Done);
}

/// A JSON number as a token count (absent or odd values count as 0).
pub fn count(value: Option<&Value>) -> u64 {
    value.and_then(Value::as_u64).unwrap_or(0)
}

/// What the wires' decoder tests share.
#[cfg(test)]
#[allow(clippy::unwrap_used)]
pub(crate) mod tests {
    use super::*;

    /// What `decoder` makes of one event named `name` carrying `data`.
    pub(crate) fn decode_one(
        decoder: &mut impl Decoder,
        name: &str,
        data: &Value,
    ) -> Vec<StreamEvent> {
        let event = Event {
            event: name.to_string(),
            data: data.to_string(),
        };
        let mut out = VecDeque::new();
        decoder.decode(&event, &mut out).unwrap();
        out.into_iter().collect()
    }

    /// A reader of `bytes` with bounds that never bite.
    fn unbounded_reader<S>(bytes: S) -> BodyReader<S> {
        BodyReader {
            bytes: Box::pin(bytes),
            first_read: None,
            last_read: None,
            read_bytes: 0,
            paced: 0,
            first_byte_deadline: None,
            pace: Pace::new(std::time::Duration::from_secs(60), 1),
            pending: Arc::new(AtomicUsize::new(0)),
            max_pending: usize::MAX,
            no_first_byte: ModelError::Cancelled,
            stalled: ModelError::Cancelled,
            trickle: ModelError::Cancelled,
            too_large: ModelError::Cancelled,
            service: "test".to_string(),
        }
    }

    #[tokio::test]
    async fn chunks_that_came_together_are_read_together_without_waiting_for_the_pace() {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        const CHUNKS: usize = 300;
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        tokio::spawn(async move {
            let (mut socket, _) = listener.accept().await.unwrap();
            let mut head = Vec::new();
            let mut byte = [0u8; 1];
            while !head.ends_with(b"\r\n\r\n") {
                socket.read_exact(&mut byte).await.unwrap();
                head.push(byte[0]);
            }
            // Every event its own chunk, all of them in one write.
            let mut body = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n".to_vec();
            for i in 0..CHUNKS {
                let event = format!("data: {i}\n\n");
                body.extend_from_slice(format!("{:x}\r\n{event}\r\n", event.len()).as_bytes());
            }
            body.extend_from_slice(b"0\r\n\r\n");
            socket.write_all(&body).await.unwrap();
            socket.flush().await.unwrap();
        });
        let client = crate::model::http::plain_client(std::time::Duration::from_secs(5)).unwrap();
        let response = client
            .get(format!("http://{address}/"))
            .send()
            .await
            .unwrap();
        let mut reader = unbounded_reader(response.bytes_stream());
        let mut text = Vec::new();
        let mut reads = 0;
        while let Some(chunk) = reader.next().await {
            text.extend_from_slice(&chunk.unwrap());
            reads += 1;
        }
        let want: String = (0..CHUNKS).map(|i| format!("data: {i}\n\n")).collect();
        assert_eq!(String::from_utf8(text).unwrap(), want);
        assert!(reads > 1, "the body came as chunks ({reads} reads)");
        // Read one by one, each waiting for the pace, the body would take
        // 300 waits (six seconds); read as they are there, a wait or two.
        assert!(
            reader.paced <= 2,
            "{} reads waited for the pace",
            reader.paced
        );
    }

    /// A body whose chunks are what `receiver` gets, as they come.
    fn received(
        receiver: tokio::sync::mpsc::UnboundedReceiver<Vec<u8>>,
    ) -> impl Stream<Item = reqwest::Result<Vec<u8>>> {
        stream::unfold(receiver, |mut receiver| async move {
            let piece = receiver.recv().await?;
            Some((Ok(piece), receiver))
        })
    }

    /// When each of `count` pieces of `size` bytes, sent one every `every`
    /// ms whether or not the reader reads, was read (the clock is the
    /// test's own), and how many reads waited for the pace.
    async fn read_times(count: u32, size: usize, every: u64) -> (Vec<u64>, u64) {
        use tokio::time::{Duration, Instant};
        let (sender, receiver) = tokio::sync::mpsc::unbounded_channel();
        tokio::spawn(async move {
            for i in 0..count {
                if i > 0 {
                    tokio::time::sleep(Duration::from_millis(every)).await;
                }
                sender.send(vec![b'x'; size]).unwrap();
            }
        });
        let mut reader = unbounded_reader(received(receiver));
        let start = Instant::now();
        let mut came = Vec::new();
        while let Some(piece) = reader.next().await {
            piece.unwrap();
            came.push(u64::try_from(start.elapsed().as_millis()).unwrap());
        }
        assert_eq!(came.len(), count as usize);
        (came, reader.paced)
    }

    #[tokio::test(start_paused = true)]
    async fn a_trickle_is_caught_at_its_window_s_end_though_reads_wait_for_the_pace() {
        use tokio::time::{Duration, Instant};
        // A kilobyte at once, then a byte every 40 ms: 25 bytes a second,
        // against a window of a second that wants 64. Each read waits 50 ms
        // for the pace, and a byte has always come by then.
        let (sender, receiver) = tokio::sync::mpsc::unbounded_channel();
        tokio::spawn(async move {
            sender.send(vec![b'x'; 1024]).unwrap();
            for _ in 0..200 {
                tokio::time::sleep(Duration::from_millis(40)).await;
                if sender.send(vec![b'x']).is_err() {
                    return;
                }
            }
        });
        let mut reader = unbounded_reader(received(receiver));
        reader.pace = Pace::new(Duration::from_secs(1), 64);
        reader.trickle = ModelError::Stalled {
            service: "trickle".to_string(),
            seconds: 1,
        };
        let start = Instant::now();
        let ended = loop {
            match reader.next().await {
                Some(Ok(_)) => {}
                Some(Err(error)) => break Some(error),
                None => break None,
            }
        };
        assert!(
            matches!(&ended, Some(ModelError::Stalled { service, .. }) if service == "trickle"),
            "{ended:?}"
        );
        // The window opened with the first kilobyte; it ends a second later.
        assert_eq!(start.elapsed(), Duration::from_secs(1));
    }

    /// The moments reads happened at, each once.
    fn moments(came: &[u64]) -> Vec<u64> {
        let mut moments = came.to_vec();
        moments.dedup();
        moments
    }

    #[tokio::test(start_paused = true)]
    async fn a_first_piece_is_read_at_once_and_a_slow_stream_a_pace_at_a_time() {
        // 100 bytes every 5 ms: 2 KiB come in about 100 ms.
        let (came, paced) = read_times(100, 100, 5).await;
        // The first kilobyte as it comes: a piece every 5 ms.
        assert_eq!(&came[..11], &[0, 5, 10, 15, 20, 25, 30, 35, 40, 45, 50]);
        // Then a read every 50 ms, which takes all the pieces that came
        // (the last, sent at 495 ms, waits for it).
        assert_eq!(
            moments(&came[10..]),
            [50, 100, 150, 200, 250, 300, 350, 400, 450, 500]
        );
        assert_eq!(paced, 9);
    }

    #[tokio::test(start_paused = true)]
    async fn a_faster_stream_waits_less_and_a_fast_one_not_at_all() {
        // 400 bytes every 5 ms: 2 KiB in about 25 ms, and a read about as
        // often.
        let (came, paced) = read_times(100, 400, 5).await;
        let moments = moments(&came);
        assert_eq!(&moments[..3], &[0, 5, 10]);
        for pair in moments[3..].windows(2) {
            let gap = pair[1] - pair[0];
            assert!((20..=30).contains(&gap), "{moments:?}");
        }
        assert!((17..=20).contains(&paced), "{paced} reads waited");
        // 1,000 bytes every millisecond: 2 KiB in 2 ms, read as they come.
        let (came, paced) = read_times(200, 1000, 1).await;
        assert_eq!(came, (0..200).collect::<Vec<u64>>());
        assert_eq!(paced, 0);
    }
}
