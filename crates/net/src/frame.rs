//! Length-prefixed framing: each message is a little-endian `u32` payload length followed by
//! the payload.
//!
//! The reader is a plain function over any [`AsyncRead`], so it can be tested (and fuzzed)
//! on in-memory byte streams. It never allocates more than a bounded chunk ahead of the
//! bytes actually received, so a peer announcing a huge frame and then stalling cannot make
//! us allocate the announced size.

use std::io;
use std::time::Instant;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use triskele_share::PartyId;

use crate::error::NetError;
use crate::tls::map_io_error;

/// Size of the length prefix.
pub const HEADER_LEN: usize = 4;

/// The largest frame the wire format can express.
pub const WIRE_MAX: usize = u32::MAX as usize;

/// Payloads up to this size are copied behind the header so that header and payload leave
/// in one write (one TLS record, one TCP segment for small messages).
const COALESCE_LIMIT: usize = 64 * 1024;

/// The receive buffer grows in steps of at most this size ahead of received data.
const INITIAL_CHUNK: usize = 16 * 1024 * 1024;

/// Reads one frame from `r`.
///
/// Returns `Ok(None)` if the stream ends cleanly before the first byte of a frame (the peer
/// closed the link between frames). Errors: [`NetError::FrameTooLarge`] if the announced
/// length exceeds `max_frame` (nothing is allocated for it), [`NetError::Truncated`] if the
/// stream ends inside the header or the payload, and I/O or TLS errors otherwise. `peer`
/// names the sender in errors.
pub async fn read_frame<R>(
    r: &mut R,
    max_frame: usize,
    peer: PartyId,
) -> Result<Option<Vec<u8>>, NetError>
where
    R: AsyncRead + Unpin + ?Sized,
{
    Ok(read_frame_stamped(r, max_frame, peer)
        .await?
        .map(|(payload, _)| payload))
}

/// Like [`read_frame`], also returning the instant at which the header was complete (used
/// by the network simulation: the frame "arrived" when its header did).
pub(crate) async fn read_frame_stamped<R>(
    r: &mut R,
    max_frame: usize,
    peer: PartyId,
) -> Result<Option<(Vec<u8>, Instant)>, NetError>
where
    R: AsyncRead + Unpin + ?Sized,
{
    let Some(len) = read_header(r, peer).await? else {
        return Ok(None);
    };
    let stamp = Instant::now();
    if len > max_frame as u64 {
        return Err(NetError::FrameTooLarge {
            peer,
            len,
            max: max_frame as u64,
        });
    }
    let payload = read_payload(r, len, peer).await?;
    Ok(Some((payload, stamp)))
}

/// End-of-stream conditions: a clean EOF, or the TLS layer / OS reporting that the peer
/// went away.
fn is_eof_like(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::UnexpectedEof
            | io::ErrorKind::ConnectionReset
            | io::ErrorKind::ConnectionAborted
            | io::ErrorKind::BrokenPipe
    ) && e
        .get_ref()
        .is_none_or(|inner| inner.downcast_ref::<rustls::Error>().is_none())
}

async fn read_header<R>(r: &mut R, peer: PartyId) -> Result<Option<u64>, NetError>
where
    R: AsyncRead + Unpin + ?Sized,
{
    let mut header = [0u8; HEADER_LEN];
    let mut filled = 0;
    while filled < HEADER_LEN {
        let n = match r.read(&mut header[filled..]).await {
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) if is_eof_like(&e) => 0,
            Err(e) => return Err(map_io_error(peer, "reading a frame header", e)),
        };
        if n == 0 {
            if filled == 0 {
                return Ok(None);
            }
            return Err(NetError::Truncated {
                peer,
                expected: HEADER_LEN as u64,
                got: filled as u64,
            });
        }
        filled += n;
    }
    Ok(Some(u64::from(u32::from_le_bytes(header))))
}

async fn read_payload<R>(r: &mut R, len: u64, peer: PartyId) -> Result<Vec<u8>, NetError>
where
    R: AsyncRead + Unpin + ?Sized,
{
    let truncated = |got: usize| NetError::Truncated {
        peer,
        expected: len,
        got: got as u64,
    };
    // `len` fits in u32 and was checked against `max_frame: usize`.
    let total = usize::try_from(len).map_err(|_| truncated(0))?;
    let mut buf = Vec::with_capacity(total.min(INITIAL_CHUNK));
    while buf.len() < total {
        if buf.len() == buf.capacity() {
            let grow = (total - buf.len()).min(buf.len().max(INITIAL_CHUNK));
            buf.reserve_exact(grow);
        }
        let remaining = (total - buf.len()) as u64;
        let n = match (&mut *r).take(remaining).read_buf(&mut buf).await {
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) if is_eof_like(&e) => 0,
            Err(e) => return Err(map_io_error(peer, "reading a frame", e)),
        };
        if n == 0 {
            return Err(truncated(buf.len()));
        }
    }
    Ok(buf)
}

/// Writes one frame (header and payload) to `w`. Does not flush.
///
/// The caller guarantees `payload.len() <= WIRE_MAX` (checked in `Network::send`).
pub async fn write_frame<W>(w: &mut W, payload: &[u8]) -> io::Result<()>
where
    W: AsyncWrite + Unpin + ?Sized,
{
    let len = u32::try_from(payload.len()).map_err(|_| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            "frame larger than the wire format allows",
        )
    })?;
    let header = len.to_le_bytes();
    if payload.len() <= COALESCE_LIMIT {
        let mut buf = Vec::with_capacity(HEADER_LEN + payload.len());
        buf.extend_from_slice(&header);
        buf.extend_from_slice(payload);
        w.write_all(&buf).await
    } else {
        w.write_all(&header).await?;
        w.write_all(payload).await
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use super::*;

    const P: PartyId = PartyId::P2;

    fn frame(payload: &[u8]) -> Vec<u8> {
        let mut v = (payload.len() as u32).to_le_bytes().to_vec();
        v.extend_from_slice(payload);
        v
    }

    #[tokio::test]
    async fn reads_consecutive_frames_then_clean_eof() {
        let mut bytes = frame(b"hello");
        bytes.extend(frame(b""));
        bytes.extend(frame(&[7u8; 100_000]));
        let mut r: &[u8] = &bytes;
        assert_eq!(
            read_frame(&mut r, 1 << 20, P).await.unwrap().unwrap(),
            b"hello"
        );
        assert_eq!(read_frame(&mut r, 1 << 20, P).await.unwrap().unwrap(), b"");
        assert_eq!(
            read_frame(&mut r, 1 << 20, P).await.unwrap().unwrap(),
            vec![7u8; 100_000]
        );
        assert!(read_frame(&mut r, 1 << 20, P).await.unwrap().is_none());
    }

    #[tokio::test]
    async fn oversized_length_is_refused_without_reading_payload() {
        let bytes = u32::MAX.to_le_bytes();
        let mut r: &[u8] = &bytes;
        match read_frame(&mut r, 1 << 30, P).await {
            Err(NetError::FrameTooLarge { peer, len, max }) => {
                assert_eq!(peer, P);
                assert_eq!(len, u64::from(u32::MAX));
                assert_eq!(max, 1 << 30);
            }
            other => panic!("expected FrameTooLarge, got {other:?}"),
        }
        // Exactly at the limit is fine.
        let bytes = frame(&[1, 2, 3]);
        let mut r: &[u8] = &bytes;
        assert!(read_frame(&mut r, 3, P).await.unwrap().is_some());
        let mut r: &[u8] = &bytes;
        assert!(matches!(
            read_frame(&mut r, 2, P).await,
            Err(NetError::FrameTooLarge { len: 3, max: 2, .. })
        ));
    }

    #[tokio::test]
    async fn truncated_payload() {
        let mut bytes = frame(&[9u8; 1000]);
        bytes.truncate(HEADER_LEN + 600);
        let mut r: &[u8] = &bytes;
        match read_frame(&mut r, 1 << 20, P).await {
            Err(NetError::Truncated {
                peer,
                expected,
                got,
            }) => {
                assert_eq!((peer, expected, got), (P, 1000, 600));
            }
            other => panic!("expected Truncated, got {other:?}"),
        }
    }

    #[tokio::test]
    async fn truncated_header() {
        let bytes = [5u8, 0];
        let mut r: &[u8] = &bytes;
        assert!(matches!(
            read_frame(&mut r, 1 << 20, P).await,
            Err(NetError::Truncated {
                expected: 4,
                got: 2,
                ..
            })
        ));
    }

    #[tokio::test]
    async fn huge_announced_frame_with_few_bytes_does_not_preallocate_all() {
        // 1 GiB announced, 10 bytes sent: Truncated, and only a bounded buffer was reserved.
        let mut bytes = (1u32 << 30).to_le_bytes().to_vec();
        bytes.extend_from_slice(&[0u8; 10]);
        let mut r: &[u8] = &bytes;
        assert!(matches!(
            read_frame(&mut r, usize::MAX, P).await,
            Err(NetError::Truncated { got: 10, .. })
        ));
    }

    #[tokio::test]
    async fn write_then_read_round_trip_over_a_duplex_pipe() {
        let (mut a, mut b) = tokio::io::duplex(1024);
        let big = (0..200_000u32).map(|i| i as u8).collect::<Vec<_>>();
        let big2 = big.clone();
        let writer = tokio::spawn(async move {
            write_frame(&mut a, b"x").await.unwrap();
            write_frame(&mut a, &big2).await.unwrap();
            a.shutdown().await.unwrap();
        });
        assert_eq!(read_frame(&mut b, 1 << 20, P).await.unwrap().unwrap(), b"x");
        assert_eq!(read_frame(&mut b, 1 << 20, P).await.unwrap().unwrap(), big);
        assert!(read_frame(&mut b, 1 << 20, P).await.unwrap().is_none());
        writer.await.unwrap();
    }
}
