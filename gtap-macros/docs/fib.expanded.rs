// #[gtap::function] pub fn fib(n: u32) -> u64 { .. } expands to:

/// Fibonacci numbers, two children per call.
#[allow(non_camel_case_types, dead_code)]
pub struct fib {
    _private: (),
}
impl ::gtap::__private::TaskFunction for fib {
    type Args = (u32,);
    type Output = u64;
    const INFO: ::gtap::__private::TaskInfo = ::gtap::__private::TaskInfo {
        name: "fib",
        file: ::core::file!(),
        line: ::core::line!(),
    };
    fn start((n,): Self::Args) -> impl ::core::future::Future<Output = u64> {
        async move {
            if n < 2 {
                return n as u64;
            }
            let (mut a, mut b) = (0, 0);
            ::gtap::__private::spawn_thread::<
                fib,
                (),
            >(
                const {
                    &::gtap::__private::Site {
                        function: "fib",
                        file: ::core::file!(),
                        line: ::core::line!(),
                    }
                },
                ::core::option::Option::None,
                &raw mut a,
                (n - 1,),
            );
            ::gtap::__private::spawn_thread::<
                fib,
                (),
            >(
                const {
                    &::gtap::__private::Site {
                        function: "fib",
                        file: ::core::file!(),
                        line: ::core::line!(),
                    }
                },
                ::core::option::Option::Some(::gtap::__private::queue_index(1)),
                &raw mut b,
                (n - 2,),
            );
            {
                ::gtap::__private::prepare_wait(
                    const {
                        &::gtap::__private::Site {
                            function: "fib",
                            file: ::core::file!(),
                            line: ::core::line!(),
                        }
                    },
                    ::core::option::Option::None,
                );
                ::gtap::__private::Suspend.await;
            };
            a + b
        }
    }
    #[inline(always)]
    unsafe fn poll_this(
        __gtap_request: &::gtap::__private::PollRequest,
    ) -> ::core::option::Option<bool> {
        unsafe { ::gtap::__private::poll_thread::<Self>(__gtap_request) }
    }
}
impl ::gtap::__private::ThreadTask for fib {}
#[doc(hidden)]
#[allow(
    non_camel_case_types,
    unused_variables,
    dead_code,
    clippy::all,
    clippy::pedantic
)]
pub fn fib<'gtap, UseGtapTaskToSpawn>(_: u32) -> UseGtapTaskToSpawn
where
    &'gtap fib: ::gtap::__private::DirectCall<fib>,
{
    loop {}
}
#[cfg(target_arch = "nvptx64")]
#[allow(non_upper_case_globals)]
#[unsafe(export_name = "__gtap_record_example$fib$3fa0b41bbaf51e5f")]
#[used]
static __GTAP_RECORD_fib: u32 = ::gtap::__private::record_bytes_u32::<fib>();
#[cfg(not(target_arch = "nvptx64"))]
#[allow(non_upper_case_globals)]
#[::gtap::__private::linkme::distributed_slice(::gtap::__private::TASK_RECORDS)]
#[linkme(crate = ::gtap::__private::linkme)]
static __GTAP_RECORD_fib: ::gtap::__private::HostRecord = ::gtap::__private::HostRecord {
    name: "fib",
    bytes: ::gtap::__private::record_bytes_u32::<fib>(),
};
impl<__GtapContext: ?::core::marker::Sized> ::gtap::__private::RunsIn<__GtapContext>
for fib {}
