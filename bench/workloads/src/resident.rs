//! Read-only inputs kept in a runtime's memory between launches, so that a workload uploads
//! its graph or matrix once per runtime rather than before every launch.

use gtap_host::{Buffer, Runtime};

/// Buffers `B` uploaded to one runtime, re-uploaded when a different runtime asks for them.
pub struct Resident<B> {
    /// A one-byte buffer of the runtime that owns the buffers (downloading it succeeds only on
    /// that runtime, which is how the owner is recognised), and the buffers.
    uploaded: Option<(Buffer<u8>, B)>,
}

impl<B> Default for Resident<B> {
    fn default() -> Self {
        Self { uploaded: None }
    }
}

impl<B> Resident<B> {
    /// The buffers on `rt`: those uploaded earlier if `rt` owns them, else `upload(rt)`'s.
    pub fn on(
        &mut self,
        rt: &Runtime,
        upload: impl FnOnce(&Runtime) -> gtap_host::Result<B>,
    ) -> gtap_host::Result<&B> {
        // A copy on another runtime is freed before the new one is made.
        let kept = self
            .uploaded
            .take()
            .filter(|(token, _)| rt.download(token).is_ok());
        let pair = match kept {
            Some(pair) => pair,
            None => (rt.upload(&[0u8])?, upload(rt)?),
        };
        Ok(&self.uploaded.insert(pair).1)
    }
}
