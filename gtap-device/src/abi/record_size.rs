//! The record size each task function exports (`__gtap_record_*` on the GPU, `TASK_RECORDS` on
//! the host), for both execution modes, in one `u32`.
//!
//! A thread-mode record is a header and one future: its size is the number itself. A
//! block-mode record is a header, the task's arguments, and one future *frame* per thread of
//! the block ([`crate::block`]): its size depends on the block size, which only the
//! configuration knows, so the function exports where the frames start and how far apart they
//! are, and the host computes `frames + threads × stride`.
//!
//! Encoding: [`OVER_ALIGNED`] (`u32::MAX`) for a future aligned beyond 16 bytes in either mode;
//! otherwise bit 31 clear: thread mode, the record's bytes; bit 31 set: block mode, bits 20..31
//! the frames' offset in 16-byte units and bits 0..20 the stride in bytes (a frame is as large
//! as the future it holds, so that the threads' frames of a small future share sectors).

/// A record whose future is aligned beyond 16 bytes (no slot can hold it).
pub const OVER_ALIGNED: u32 = u32::MAX;

const BLOCK: u32 = 1 << 31;
const STRIDE_BITS: u32 = 20;
const OFFSET_BITS: u32 = 11;

/// A task function's record size, decoded from its export.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RecordSize {
    /// A thread-mode record of this many bytes.
    Thread(u32),
    /// A block-mode record: frames start at `frames` bytes, one every `stride` bytes.
    Block {
        /// Offset of thread 0's frame.
        frames: u32,
        /// Bytes between two threads' frames (the size of the future, a multiple of its
        /// alignment).
        stride: u32,
    },
    /// Aligned beyond 16 bytes, or too large to encode.
    OverAligned,
}

impl RecordSize {
    /// Decodes an export.
    pub const fn decode(raw: u32) -> Self {
        if raw == OVER_ALIGNED {
            RecordSize::OverAligned
        } else if raw & BLOCK == 0 {
            RecordSize::Thread(raw)
        } else {
            RecordSize::Block {
                frames: ((raw >> STRIDE_BITS) & ((1 << OFFSET_BITS) - 1)) * 16,
                stride: raw & ((1 << STRIDE_BITS) - 1),
            }
        }
    }

    /// Encodes a block-mode record; [`OVER_ALIGNED`] when a field is too large to encode (a
    /// record that large fits no slot anyway).
    pub const fn block(frames: u32, stride: u32) -> u32 {
        let f = frames.div_ceil(16);
        if f >= (1 << OFFSET_BITS) - 1 || stride >= (1 << STRIDE_BITS) - 1 {
            OVER_ALIGNED
        } else {
            BLOCK | (f << STRIDE_BITS) | stride
        }
    }

    /// Bytes of the record in blocks of `threads` threads (thread mode: the size itself);
    /// `None` when over-aligned.
    pub const fn bytes(self, threads: u32) -> Option<u64> {
        match self {
            RecordSize::Thread(b) => Some(b as u64),
            RecordSize::Block { frames, stride } => {
                Some(frames as u64 + threads as u64 * stride as u64)
            }
            RecordSize::OverAligned => None,
        }
    }

    /// Whether this is a block-mode record.
    pub const fn is_block(self) -> bool {
        matches!(self, RecordSize::Block { .. })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_modes_round_trip() {
        assert_eq!(RecordSize::decode(56), RecordSize::Thread(56));
        assert_eq!(RecordSize::decode(OVER_ALIGNED), RecordSize::OverAligned);
        let raw = RecordSize::block(64, 48);
        assert_eq!(
            RecordSize::decode(raw),
            RecordSize::Block {
                frames: 64,
                stride: 48
            }
        );
        assert_eq!(RecordSize::decode(raw).bytes(256), Some(64 + 256 * 48));
        assert!(RecordSize::decode(raw).is_block());
        assert_eq!(RecordSize::Thread(56).bytes(256), Some(56));
        // A one-byte future: one byte a thread.
        let small = RecordSize::decode(RecordSize::block(64, 1));
        assert_eq!(
            small,
            RecordSize::Block {
                frames: 64,
                stride: 1
            }
        );
        assert_eq!(small.bytes(64), Some(128));
    }

    #[test]
    fn fields_too_large_to_encode_are_over_aligned() {
        assert_eq!(RecordSize::block(1 << 20, 16), OVER_ALIGNED);
        assert_eq!(RecordSize::block(64, 1 << 20), OVER_ALIGNED);
    }
}
