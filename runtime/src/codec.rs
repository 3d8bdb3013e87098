//! The framing of mobiwf messages on a libp2p stream, so that `mesh` can speak `mobiwf_proto::PROTOCOL`
//! with a size limit checked before any buffer is allocated.
//!
//! A frame is a 4-byte big-endian length followed by that many bytes of JSON. A frame longer
//! than [`MAX_MESSAGE_BYTES`] is refused on both sides: the writer does not send it, and the
//! reader fails as soon as it has read the length, without allocating for the body. A request
//! is a batch: a JSON array of 1 to [`MAX_BATCH`] envelopes, each encoded once by its sender
//! ([`encode`]) so that the mesh sizes a batch without encoding it again; the reply is an
//! array of as many answers, `null` for one the receiver left unanswered.

use std::io;

use futures::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use libp2p::StreamProtocol;
use libp2p::request_response;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::value::RawValue;

use mobiwf_proto::{Envelope, MAX_BATCH, MAX_MESSAGE_BYTES, PROTOCOL, Reply};

/// [`PROTOCOL`] as the stream protocol libp2p negotiates.
pub(crate) const STREAM_PROTOCOL: StreamProtocol = StreamProtocol::new(PROTOCOL);

/// The length prefix of a frame, in bytes.
const LENGTH_BYTES: usize = 4;

/// The request-response codec of `mobiwf_proto::PROTOCOL`: requests are [`Batch`]es, responses
/// one answer per envelope ([`Answers`]). It has no state; every stream carries one request and
/// one response.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct WireCodec;

/// One envelope as JSON, encoded by its sender.
pub(crate) type Encoded = Box<RawValue>;

/// The envelopes of one request.
#[derive(Debug)]
pub(crate) enum Batch {
    /// On their way out, encoded ([`encode`]).
    Out(Vec<Encoded>),
    /// As a peer sent them, each decoded on its own: one that does not decode (a newer
    /// peer's message kind, a bug) is left unanswered without sinking the others.
    In(Vec<Result<Envelope, String>>),
}

/// The answers to a batch, in its order: `None` for an envelope left unanswered.
pub(crate) type Answers = Vec<Option<Reply>>;

/// The bytes a batch of one adds to its envelope (the brackets of the array).
const ARRAY_BYTES: usize = 2;

/// `envelope` as JSON, refused when even alone in a batch it would make a frame over the limit.
pub(crate) fn encode(envelope: &Envelope) -> io::Result<Encoded> {
    let encoded = serde_json::value::to_raw_value(envelope).map_err(|e| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("cannot encode the request as JSON: {e}"),
        )
    })?;
    let len = encoded.get().len() + ARRAY_BYTES;
    if len > MAX_MESSAGE_BYTES {
        return Err(too_large("request", len));
    }
    Ok(encoded)
}

/// The frame length of a batch of envelopes `lengths` long each (what the tests check a
/// frame's real length against; the senders keep a [`FrameBytes`] as they fill one).
#[cfg(test)]
pub(crate) fn batch_bytes(lengths: impl IntoIterator<Item = usize>) -> usize {
    let mut frame = FrameBytes::EMPTY;
    for len in lengths {
        frame.add(len);
    }
    frame.len()
}

/// The length of a batch's frame (a JSON array) kept as its items are added, so that filling
/// a frame item by item costs one addition each.
#[derive(Debug, Clone, Copy)]
pub(crate) struct FrameBytes {
    bytes: usize,
    items: usize,
}

impl FrameBytes {
    /// The frame of no item.
    pub(crate) const EMPTY: FrameBytes = FrameBytes {
        bytes: ARRAY_BYTES,
        items: 0,
    };

    /// The frame's length with an item of `len` bytes more (and the comma before it).
    pub(crate) fn with(self, len: usize) -> usize {
        let comma = usize::from(self.items > 0);
        self.bytes.saturating_add(len).saturating_add(comma)
    }

    /// Adds an item of `len` bytes.
    pub(crate) fn add(&mut self, len: usize) {
        self.bytes = self.with(len);
        self.items += 1;
    }

    /// The frame's length.
    #[cfg(test)]
    pub(crate) fn len(self) -> usize {
        self.bytes
    }
}

/// An `InvalidData` error saying that a `what` frame of `len` bytes is over the limit.
fn too_large(what: &str, len: usize) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!(
            "{what} frame of {len} bytes exceeds the limit of {MAX_MESSAGE_BYTES} bytes \
             (mobiwf_proto::MAX_MESSAGE_BYTES)"
        ),
    )
}

/// The error inside the `UnexpectedEof` of a stream that closed before any byte of its frame:
/// the peer let the request go unanswered (it sheds what is past a limit, or will take it
/// later), as [`crate::mesh::SendError::unanswered`] tells.
#[derive(Debug, thiserror::Error)]
#[error("the stream closed without a {0}: the peer left the request unanswered")]
pub(crate) struct Unanswered(pub(crate) String);

/// Reads one frame and decodes its JSON as an `M`; `what` names the frame in errors.
pub(crate) async fn read_frame<T, M>(io: &mut T, what: &str) -> io::Result<M>
where
    T: AsyncRead + Unpin + Send,
    M: DeserializeOwned,
{
    let mut prefix = [0u8; LENGTH_BYTES];
    let first = io.read(&mut prefix).await?;
    if first == 0 {
        return Err(io::Error::new(
            io::ErrorKind::UnexpectedEof,
            Unanswered(what.to_owned()),
        ));
    }
    io.read_exact(&mut prefix[first..]).await?;
    // A length that does not fit in usize is over the limit too.
    let len = usize::try_from(u32::from_be_bytes(prefix)).unwrap_or(usize::MAX);
    if len > MAX_MESSAGE_BYTES {
        return Err(too_large(what, len));
    }
    // Grow with what actually arrives: a peer announcing a large frame and sending nothing
    // costs no memory.
    let mut body = Vec::new();
    let limit = u64::try_from(len).unwrap_or(u64::MAX);
    let got = (&mut *io).take(limit).read_to_end(&mut body).await?;
    if got < len {
        return Err(io::Error::new(
            io::ErrorKind::UnexpectedEof,
            format!("{what} frame ended after {got} of {len} bytes"),
        ));
    }
    serde_json::from_slice(&body).map_err(|e| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("{what} frame of {len} bytes is not a valid {what}: {e}"),
        )
    })
}

/// Encodes `message` as JSON and writes it as one frame; `what` names the frame in errors.
pub(crate) async fn write_frame<T, M>(io: &mut T, what: &str, message: &M) -> io::Result<()>
where
    T: AsyncWrite + Unpin + Send,
    M: Serialize,
{
    let mut frame = vec![0u8; LENGTH_BYTES];
    serde_json::to_writer(&mut frame, message).map_err(|e| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("cannot encode the {what} as JSON: {e}"),
        )
    })?;
    let len = frame.len() - LENGTH_BYTES;
    if len > MAX_MESSAGE_BYTES {
        return Err(too_large(what, len));
    }
    let prefix = u32::try_from(len).map_err(|_| too_large(what, len))?;
    frame[..LENGTH_BYTES].copy_from_slice(&prefix.to_be_bytes());
    io.write_all(&frame).await?;
    io.flush().await
}

impl request_response::Codec for WireCodec {
    type Protocol = StreamProtocol;
    type Request = Batch;
    type Response = Answers;

    async fn read_request<T>(&mut self, _: &StreamProtocol, io: &mut T) -> io::Result<Batch>
    where
        T: AsyncRead + Unpin + Send,
    {
        // The count is checked before any envelope is decoded.
        let batch: Vec<Encoded> = read_frame(io, "request").await?;
        if batch.is_empty() || batch.len() > MAX_BATCH {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!(
                    "a request of {} envelopes: a batch holds 1 to {MAX_BATCH} \
                     (mobiwf_proto::MAX_BATCH)",
                    batch.len()
                ),
            ));
        }
        Ok(Batch::In(
            batch
                .iter()
                .map(|raw| {
                    serde_json::from_str(raw.get())
                        .map_err(|e| format!("not a valid envelope: {e}"))
                })
                .collect(),
        ))
    }

    async fn read_response<T>(&mut self, _: &StreamProtocol, io: &mut T) -> io::Result<Answers>
    where
        T: AsyncRead + Unpin + Send,
    {
        read_frame(io, "reply").await
    }

    async fn write_request<T>(
        &mut self,
        _: &StreamProtocol,
        io: &mut T,
        request: Batch,
    ) -> io::Result<()>
    where
        T: AsyncWrite + Unpin + Send,
    {
        match request {
            Batch::Out(encoded) => write_frame(io, "request", &encoded).await,
            Batch::In(_) => Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "a batch as it was received is not sent on",
            )),
        }
    }

    async fn write_response<T>(
        &mut self,
        _: &StreamProtocol,
        io: &mut T,
        answers: Answers,
    ) -> io::Result<()>
    where
        T: AsyncWrite + Unpin + Send,
    {
        write_frame(io, "reply", &answers).await
    }
}

#[cfg(test)]
mod tests {
    use futures::io::Cursor;
    use libp2p::request_response::Codec as _;

    use super::*;
    use mobiwf_proto::{Message, MessageId, Outcome};

    fn envelope() -> Envelope {
        Envelope {
            answered_below: 0,
            epoch: None,
            id: MessageId {
                incarnation: 0,
                origin: "origin".into(),
                seq: 7,
            },
            message: Message::Notify(mobiwf_proto::Notify::new(
                mobiwf_proto::InstanceId(1),
                mobiwf_proto::ActivityId(2),
                Outcome::Succeeded,
            )),
        }
    }

    /// The bytes a request carrying `encoded` is sent as.
    async fn request_bytes(encoded: Vec<Encoded>) -> Vec<u8> {
        let mut buf = Cursor::new(Vec::new());
        WireCodec
            .write_request(&STREAM_PROTOCOL, &mut buf, Batch::Out(encoded))
            .await
            .unwrap();
        buf.into_inner()
    }

    /// What a receiver reads of a request's `bytes`: its envelopes, each decoded or not.
    async fn read_request(bytes: Vec<u8>) -> io::Result<Vec<Result<Envelope, String>>> {
        match WireCodec
            .read_request(&STREAM_PROTOCOL, &mut Cursor::new(bytes))
            .await?
        {
            Batch::In(read) => Ok(read),
            Batch::Out(_) => panic!("read as outgoing"),
        }
    }

    #[tokio::test]
    async fn a_batch_round_trips_and_its_length_is_what_batch_bytes_says() {
        let mut codec = WireCodec;
        let mut second = envelope();
        second.id.seq = 8;
        let encoded = vec![encode(&envelope()).unwrap(), encode(&second).unwrap()];
        let expected = batch_bytes(encoded.iter().map(|e| e.get().len()));
        let bytes = request_bytes(encoded).await;
        let len = u32::from_be_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]) as usize;
        assert_eq!(len, bytes.len() - 4);
        assert_eq!(len, expected);
        let read = read_request(bytes).await.unwrap();
        assert_eq!(read, vec![Ok(envelope()), Ok(second)]);

        let answers = vec![Some(Reply::Ack), None];
        let mut buf = Cursor::new(Vec::new());
        codec
            .write_response(&STREAM_PROTOCOL, &mut buf, answers.clone())
            .await
            .unwrap();
        let read = codec
            .read_response(&STREAM_PROTOCOL, &mut Cursor::new(buf.into_inner()))
            .await
            .unwrap();
        assert_eq!(read, answers);
    }

    #[tokio::test]
    async fn an_empty_batch_or_one_past_max_batch_is_refused() {
        for count in [0, MAX_BATCH + 1] {
            let bytes = request_bytes(vec![encode(&envelope()).unwrap(); count]).await;
            let err = read_request(bytes).await.unwrap_err();
            assert_eq!(err.kind(), io::ErrorKind::InvalidData);
            assert!(err.to_string().contains("MAX_BATCH"), "{err}");
        }
    }

    #[tokio::test]
    async fn an_envelope_that_does_not_decode_leaves_the_others_of_its_batch_readable() {
        let good = encode(&envelope()).unwrap();
        let odd =
            RawValue::from_string(r#"{"id":{"kind":"from a newer peer"}}"#.to_owned()).unwrap();
        let read = read_request(request_bytes(vec![odd, good]).await)
            .await
            .unwrap();
        assert!(
            read[0]
                .as_ref()
                .is_err_and(|e| e.contains("not a valid envelope"))
        );
        assert_eq!(read[1], Ok(envelope()));
    }

    /// Every message kind with every optional field set must come back as it went (an
    /// internally tagged enum loses number-keyed maps, for one).
    #[test]
    fn a_deployment_naming_who_runs_what_round_trips() {
        let sent = Envelope {
            answered_below: 0,
            epoch: None,
            id: MessageId {
                incarnation: 0,
                origin: "origin".into(),
                seq: 8,
            },
            message: Message::Deploy(mobiwf_proto::Deploy {
                instance: mobiwf_proto::InstanceId(1),
                partition: mobiwf_proto::PartitionId(2),
                document: "<workflow/>".into(),
                responsible: Some(mobiwf_proto::UserId::new("ann")),
                hour_ms: Some(100),
                inputs: Default::default(),
                runs_on: vec![
                    (mobiwf_proto::ActivityId(16), "p1".into()),
                    (mobiwf_proto::ActivityId(19), "p2".into()),
                ],
            }),
        };
        let bytes = serde_json::to_vec(&sent).unwrap();
        assert_eq!(serde_json::from_slice::<Envelope>(&bytes).unwrap(), sent);
    }

    #[tokio::test]
    async fn oversized_length_is_refused_before_reading_the_body() {
        // Only the prefix is there: an error other than "unexpected end of file" shows the
        // length was refused before the body was read.
        let claimed = u32::try_from(MAX_MESSAGE_BYTES + 1).unwrap();
        let mut io = Cursor::new(claimed.to_be_bytes().to_vec());
        let err = WireCodec
            .read_request(&STREAM_PROTOCOL, &mut io)
            .await
            .unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidData);
        assert!(err.to_string().contains("exceeds the limit"), "{err}");

        let mut io = Cursor::new(u32::MAX.to_be_bytes().to_vec());
        let err = WireCodec
            .read_response(&STREAM_PROTOCOL, &mut io)
            .await
            .unwrap_err();
        assert!(err.to_string().contains("exceeds the limit"), "{err}");
    }

    #[test]
    fn an_envelope_too_large_for_a_frame_alone_is_not_encoded() {
        let mut big = envelope();
        big.message = Message::Deploy(mobiwf_proto::Deploy {
            instance: mobiwf_proto::InstanceId(1),
            partition: mobiwf_proto::PartitionId(1),
            document: "x".repeat(MAX_MESSAGE_BYTES),
            responsible: None,
            hour_ms: None,
            inputs: Default::default(),
            runs_on: Default::default(),
        });
        let err = encode(&big).unwrap_err();
        assert!(err.to_string().contains("exceeds the limit"), "{err}");
    }

    #[tokio::test]
    async fn bad_json_and_truncated_frames_fail() {
        let mut bytes = 5u32.to_be_bytes().to_vec();
        bytes.extend_from_slice(b"nope!");
        let err = WireCodec
            .read_response(&STREAM_PROTOCOL, &mut Cursor::new(bytes))
            .await
            .unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidData);

        let mut bytes = 10u32.to_be_bytes().to_vec();
        bytes.extend_from_slice(b"{}");
        let err = WireCodec
            .read_response(&STREAM_PROTOCOL, &mut Cursor::new(bytes))
            .await
            .unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::UnexpectedEof);
    }
}
