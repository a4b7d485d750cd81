//! Why a host buffer could not be made, and the guest's error code for it; the adapters
//! (`abi::buffers`, `component::buffers`) hand code and message to the guest in their own form.

use wrt_abi::ErrorCode;

/// A host buffer refused.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub(crate) enum AllocError {
    /// The buffer is larger than [`MAX_BUFFER`](super::buffer::MAX_BUFFER).
    #[error("a buffer of {bytes} bytes is larger than the 1 GiB maximum")]
    TooLarge { bytes: usize },
    /// The memory limit or the handle table left no room, even after `full_collections` full
    /// collections.
    #[error("cannot allocate {shortfall} (after {full_collections} full collections)")]
    NoRoom { shortfall: Shortfall, full_collections: u32 },
    /// The host could not map the bytes.
    #[error("the host could not map {len} bytes")]
    MapFailed { len: usize },
}

impl AllocError {
    /// The guest's error code: `INVALID_ARGUMENT` for a buffer over the 1 GiB maximum,
    /// `NO_MEMORY` otherwise.
    pub(crate) fn code(&self) -> ErrorCode {
        match self {
            AllocError::TooLarge { .. } => ErrorCode::InvalidArgument,
            AllocError::NoRoom { .. } | AllocError::MapFailed { .. } => ErrorCode::NoMemory,
        }
    }
}

/// What was missing when a buffer found no room.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub(crate) enum Shortfall {
    /// Every buffer handle is live or used.
    #[error("a buffer handle: {max} are live, or every buffer handle was used")]
    Handles { max: usize },
    /// The buffer and the sources saved from linear memory exceed what the memory limit leaves
    /// beside linear memory, even with every buffer freed.
    #[error(
        "{bytes} bytes: with {save_len} bytes of linear memory saved during a collection, that is more than the \
         {ceiling} bytes the memory limit leaves beside linear memory"
    )]
    OverCeiling { bytes: usize, save_len: u64, ceiling: u64 },
    /// The sources to save before a collection do not fit the room left now.
    #[error(
        "{bytes} bytes: {live} bytes of buffers are live ({footprint} with the host's blocks), and the {save_len} \
         bytes of linear memory to save before a collection do not fit the {room} bytes left under the memory limit \
         and the 4 MiB the host's overhead allows for them"
    )]
    SaveDoesNotFit { bytes: usize, live: u64, footprint: u64, save_len: u64, room: u64 },
    /// The buffer does not fit, and no collection can free more.
    #[error(
        "{bytes} bytes: {live} bytes of buffers are live ({footprint} with the host's blocks) and {room} bytes are \
         left under the memory limit"
    )]
    Full { bytes: usize, live: u64, footprint: u64, room: u64 },
}

impl Shortfall {
    /// Whether memory was short (the room under the limit), rather than handles.
    pub(crate) fn is_memory(&self) -> bool {
        !matches!(self, Shortfall::Handles { .. })
    }
}
