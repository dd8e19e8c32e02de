//! Frames of the client-server protocol (`pokeshell_core::wire`) read from an async stream.

use std::io;

use pokeshell_core::wire::WireError;
use pokeshell_core::wire::frame::{HEADER, checked_len, truncated_on_eof};
use tokio::io::{AsyncRead, AsyncReadExt};

/// Reads one frame: `Ok(None)` when the stream ends cleanly between frames. It reads exactly the
/// frame's bytes, so what follows stays in the stream. Not cancellation safe: a frame half read when
/// the future is dropped is lost (in a `select!` loop, read into a [`FrameBuf`] instead).
pub async fn read_frame_async(r: &mut (impl AsyncRead + Unpin)) -> Result<Option<(u8, Vec<u8>)>, WireError> {
    let mut header = [0u8; HEADER];
    let mut got = 0;
    while got < HEADER {
        match r.read(&mut header[got..]).await {
            Ok(0) if got == 0 => return Ok(None),
            Ok(0) => return Err(WireError::Truncated),
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(WireError::Io(e)),
        }
    }
    let len = checked_len(header)?;
    let kind = r.read_u8().await.map_err(truncated_on_eof)?;
    let mut payload = vec![0u8; len - 1];
    r.read_exact(&mut payload).await.map_err(truncated_on_eof)?;
    Ok(Some((kind, payload)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use pokeshell_core::wire::{Up, decode_up, encode_up};

    #[tokio::test]
    async fn the_async_reader_reads_frames_and_reports_the_same_errors() {
        let mut stream = encode_up(&Up::List);
        stream.extend(encode_up(&Up::Input(b"\0q".to_vec())));
        let mut reader = &stream[..];
        let first = read_frame_async(&mut reader).await.unwrap().unwrap();
        assert_eq!(decode_up(first.0, &first.1).unwrap(), Up::List);
        let second = read_frame_async(&mut reader).await.unwrap().unwrap();
        assert_eq!(
            decode_up(second.0, &second.1).unwrap(),
            Up::Input(b"\0q".to_vec())
        );
        assert!(read_frame_async(&mut reader).await.unwrap().is_none());

        let cut = &stream[..stream.len() - 1];
        let mut reader = cut;
        read_frame_async(&mut reader).await.unwrap();
        assert!(matches!(
            read_frame_async(&mut reader).await,
            Err(WireError::Truncated)
        ));
        assert!(matches!(
            read_frame_async(&mut &[0u8, 0][..]).await,
            Err(WireError::Truncated)
        ));
        let huge = [0xff, 0xff, 0xff, 0xff];
        assert!(matches!(
            read_frame_async(&mut &huge[..]).await,
            Err(WireError::TooLong { .. })
        ));
        assert!(matches!(
            read_frame_async(&mut &[0u8; 4][..]).await,
            Err(WireError::Empty)
        ));
    }
}
