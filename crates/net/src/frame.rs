//! Length-prefixed framing: each message is a little-endian `u32` payload length followed by
//! the payload.
//!
//! [`FrameDecoder`] is sans-IO: it is fed byte slices as they arrive (from a TLS plaintext
//! buffer, a socket, or a test vector) and returns whole frames, so it can be tested and
//! fuzzed without sockets. It never allocates more than a bounded chunk ahead of the bytes
//! actually received, so a peer announcing a huge frame and then stalling cannot make us
//! allocate the announced size. [`read_frame`] runs it over any blocking [`Read`].

use std::io::{self, Read};

use triskele_share::PartyId;

use crate::error::NetError;

/// Size of the length prefix.
pub const HEADER_LEN: usize = 4;

/// The largest frame the wire format can express.
pub const WIRE_MAX: usize = u32::MAX as usize;

/// The receive buffer grows in steps of at most this size ahead of received data.
const GROW_CHUNK: usize = 16 * 1024 * 1024;

/// The header announcing a payload of `len` bytes (`len <= WIRE_MAX`, checked by callers).
pub fn encode_header(len: usize) -> [u8; HEADER_LEN] {
    u32::try_from(len).unwrap_or(u32::MAX).to_le_bytes()
}

/// Incremental frame decoder for one direction of one link.
#[derive(Debug)]
pub struct FrameDecoder {
    max_frame: usize,
    peer: PartyId,
    header: [u8; HEADER_LEN],
    header_filled: usize,
    /// Announced payload length and the bytes received so far, once the header is complete.
    payload: Option<(usize, Vec<u8>)>,
}

impl FrameDecoder {
    /// A decoder refusing frames larger than `max_frame`; `peer` names the sender in errors.
    pub fn new(max_frame: usize, peer: PartyId) -> FrameDecoder {
        FrameDecoder {
            max_frame,
            peer,
            header: [0; HEADER_LEN],
            header_filled: 0,
            payload: None,
        }
    }

    /// Consumes bytes from `data`, at most up to the end of the current frame. Returns how
    /// many bytes were consumed and the frame if it is now complete.
    ///
    /// Fails with [`NetError::FrameTooLarge`] as soon as a header announces more than the
    /// limit. After an error the decoder must not be used again.
    pub fn feed(&mut self, data: &[u8]) -> Result<(usize, Option<Vec<u8>>), NetError> {
        let mut used = 0;
        if self.payload.is_none() {
            let take = (HEADER_LEN - self.header_filled).min(data.len());
            self.header[self.header_filled..self.header_filled + take]
                .copy_from_slice(&data[..take]);
            self.header_filled += take;
            used += take;
            if self.header_filled < HEADER_LEN {
                return Ok((used, None));
            }
            let len = u32::from_le_bytes(self.header) as usize;
            if len > self.max_frame {
                return Err(NetError::FrameTooLarge {
                    peer: self.peer,
                    len: len as u64,
                    max: self.max_frame as u64,
                });
            }
            self.payload = Some((len, Vec::with_capacity(len.min(GROW_CHUNK))));
        }
        let Some((len, buf)) = self.payload.as_mut() else {
            return Ok((used, None));
        };
        let take = (*len - buf.len()).min(data.len() - used);
        if buf.capacity() - buf.len() < take {
            let grow = (*len - buf.len()).min(buf.len().max(GROW_CHUNK));
            buf.reserve_exact(grow.max(take));
        }
        buf.extend_from_slice(&data[used..used + take]);
        used += take;
        if buf.len() < *len {
            return Ok((used, None));
        }
        self.header_filled = 0;
        Ok((used, self.payload.take().map(|(_, b)| b)))
    }

    /// True between frames (no partial header or payload buffered).
    pub fn is_idle(&self) -> bool {
        self.header_filled == 0 && self.payload.is_none()
    }

    /// The error for a stream that ends now: [`NetError::Disconnected`] between frames,
    /// [`NetError::Truncated`] inside one.
    pub fn end_of_stream(&self) -> NetError {
        let peer = self.peer;
        match &self.payload {
            Some((len, buf)) => NetError::Truncated {
                peer,
                expected: *len as u64,
                got: buf.len() as u64,
            },
            None if self.header_filled > 0 => NetError::Truncated {
                peer,
                expected: HEADER_LEN as u64,
                got: self.header_filled as u64,
            },
            None => NetError::Disconnected { peer },
        }
    }
}

/// End-of-stream conditions reported as errors by the OS.
pub(crate) fn is_eof_like(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::UnexpectedEof
            | io::ErrorKind::ConnectionReset
            | io::ErrorKind::ConnectionAborted
            | io::ErrorKind::BrokenPipe
    )
}

/// Reads one frame from a blocking reader.
///
/// Returns `Ok(None)` if the stream ends cleanly before the first byte of a frame.
/// Errors: [`NetError::FrameTooLarge`] if the announced length exceeds `max_frame` (nothing is
/// allocated for it), [`NetError::Truncated`] if the stream ends inside the header or the
/// payload, [`NetError::Io`] otherwise. Reads at most up to the end of the frame.
pub fn read_frame<R: Read + ?Sized>(
    r: &mut R,
    max_frame: usize,
    peer: PartyId,
) -> Result<Option<Vec<u8>>, NetError> {
    let mut dec = FrameDecoder::new(max_frame, peer);
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        // Never read past the current frame.
        let want = match &dec.payload {
            Some((len, got)) => (len - got.len()).min(buf.len()),
            None => HEADER_LEN - dec.header_filled,
        };
        let n = match r.read(&mut buf[..want]) {
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) if is_eof_like(&e) => 0,
            Err(e) => return Err(NetError::io(Some(peer), "reading a frame", e)),
        };
        if n == 0 {
            return match dec.end_of_stream() {
                NetError::Disconnected { .. } => Ok(None),
                e => Err(e),
            };
        }
        if let (_, Some(frame)) = dec.feed(&buf[..n])? {
            return Ok(Some(frame));
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use super::*;

    const P: PartyId = PartyId::P2;

    fn frame(payload: &[u8]) -> Vec<u8> {
        let mut v = encode_header(payload.len()).to_vec();
        v.extend_from_slice(payload);
        v
    }

    #[test]
    fn reads_consecutive_frames_then_clean_eof() {
        let mut bytes = frame(b"hello");
        bytes.extend(frame(b""));
        bytes.extend(frame(&[7u8; 100_000]));
        let mut r: &[u8] = &bytes;
        assert_eq!(read_frame(&mut r, 1 << 20, P).unwrap().unwrap(), b"hello");
        assert_eq!(read_frame(&mut r, 1 << 20, P).unwrap().unwrap(), b"");
        assert_eq!(
            read_frame(&mut r, 1 << 20, P).unwrap().unwrap(),
            vec![7u8; 100_000]
        );
        assert!(read_frame(&mut r, 1 << 20, P).unwrap().is_none());
    }

    #[test]
    fn decoder_handles_any_split() {
        let mut bytes = frame(b"abc");
        bytes.extend(frame(b""));
        bytes.extend(frame(&[1, 2, 3, 4, 5, 6, 7]));
        for step in 1..=bytes.len() {
            let mut dec = FrameDecoder::new(100, P);
            let mut frames = Vec::new();
            for chunk in bytes.chunks(step) {
                let mut off = 0;
                loop {
                    let (n, f) = dec.feed(&chunk[off..]).unwrap();
                    off += n;
                    match f {
                        Some(f) => frames.push(f),
                        None if off == chunk.len() => break,
                        None => {}
                    }
                }
            }
            assert_eq!(
                frames,
                vec![b"abc".to_vec(), vec![], vec![1, 2, 3, 4, 5, 6, 7]],
                "step {step}"
            );
            assert!(dec.is_idle());
        }
    }

    #[test]
    fn oversized_length_is_refused_without_reading_payload() {
        let bytes = u32::MAX.to_le_bytes();
        let mut r: &[u8] = &bytes;
        match read_frame(&mut r, 1 << 30, P) {
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
        assert!(read_frame(&mut r, 3, P).unwrap().is_some());
        let mut r: &[u8] = &bytes;
        assert!(matches!(
            read_frame(&mut r, 2, P),
            Err(NetError::FrameTooLarge { len: 3, max: 2, .. })
        ));
    }

    #[test]
    fn truncated_payload() {
        let mut bytes = frame(&[9u8; 1000]);
        bytes.truncate(HEADER_LEN + 600);
        let mut r: &[u8] = &bytes;
        match read_frame(&mut r, 1 << 20, P) {
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

    #[test]
    fn truncated_header() {
        let bytes = [5u8, 0];
        let mut r: &[u8] = &bytes;
        assert!(matches!(
            read_frame(&mut r, 1 << 20, P),
            Err(NetError::Truncated {
                expected: 4,
                got: 2,
                ..
            })
        ));
    }

    #[test]
    fn huge_announced_frame_does_not_preallocate_it() {
        let mut dec = FrameDecoder::new(usize::MAX, P);
        let mut bytes = (1u32 << 30).to_le_bytes().to_vec();
        bytes.extend_from_slice(&[0u8; 10]);
        assert_eq!(dec.feed(&bytes).unwrap(), (14, None));
        let cap = dec.payload.as_ref().map(|(_, b)| b.capacity()).unwrap();
        assert!(cap <= GROW_CHUNK, "{cap}");
        assert!(matches!(
            dec.end_of_stream(),
            NetError::Truncated {
                expected: 0x4000_0000,
                got: 10,
                ..
            }
        ));
    }

    #[test]
    fn frames_over_a_real_socket() {
        use std::io::Write;
        use std::net::{Shutdown, TcpListener, TcpStream};
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let mut tx = TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let (mut rx, _) = l.accept().unwrap();
        let big = (0..300_000u32).map(|i| i as u8).collect::<Vec<_>>();
        let mut bytes = frame(b"x");
        bytes.extend(frame(&big));
        bytes.extend(&frame(b"cut short")[..8]);
        let writer = std::thread::spawn(move || {
            tx.write_all(&bytes).unwrap();
            tx.shutdown(Shutdown::Write).unwrap();
        });
        assert_eq!(read_frame(&mut rx, 1 << 20, P).unwrap().unwrap(), b"x");
        assert_eq!(read_frame(&mut rx, 1 << 20, P).unwrap().unwrap(), big);
        assert!(matches!(
            read_frame(&mut rx, 1 << 20, P),
            Err(NetError::Truncated {
                expected: 9,
                got: 4,
                ..
            })
        ));
        writer.join().unwrap();
    }
}
