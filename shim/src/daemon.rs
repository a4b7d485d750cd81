//! The shim's process: containerd starts it (`start`), asks it to clean up after a crash
//! (`delete`), and otherwise talks to its task service ([`TaskService`]) until every container
//! is gone. The zygote that creates containers is forked first, before any thread starts.

use std::io::Write as _;
use std::sync::Arc;

use containerd_shim::protos::protobuf::{Message as _, MessageField};
use containerd_shim::protos::types::introspection::{RuntimeInfo, RuntimeVersion};
use containerd_shim::publisher::RemotePublisher;
use containerd_shim::{Config, DeleteResponse, ExitSignal, Flags, StartOpts};
use runtime_spec::runtime::Spec;

use crate::task::TaskService;

/// The annotation that groups a pod's containers into its sandbox's shim.
const SANDBOX_ID: &str = "io.kubernetes.cri.sandbox-id";

/// The shim, as containerd's shim library runs it.
pub struct WrtShim {
    namespace: String,
    containerd_address: String,
    exit: Arc<ExitSignal>,
}

impl std::fmt::Debug for WrtShim {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WrtShim").field("namespace", &self.namespace).finish_non_exhaustive()
    }
}

impl containerd_shim::Shim for WrtShim {
    type T = TaskService;

    fn new(_runtime_id: &str, args: &Flags, _config: &mut Config) -> Self {
        WrtShim { namespace: args.namespace.clone(), containerd_address: args.address.clone(), exit: Arc::default() }
    }

    /// Starts the shim's daemon for a container, or names the one already serving its pod: the
    /// containers of one Kubernetes pod share their sandbox's shim.
    fn start_shim(&mut self, opts: StartOpts) -> containerd_shim::Result<String> {
        let spec = Spec::load("config.json")
            .map_err(|err| containerd_shim::Error::InvalidArgument(format!("the container's spec: {err}")))?;
        let id = opts.id.clone();
        let grouping = spec.annotations().as_ref().and_then(|a| a.get(SANDBOX_ID)).cloned().unwrap_or(id);
        let (_pid, address) = containerd_shim::spawn(opts, &grouping, Vec::new())?;
        containerd_shim::util::write_address(&address)?;
        Ok(address)
    }

    fn delete_shim(&mut self) -> containerd_shim::Result<DeleteResponse> {
        Ok(DeleteResponse {
            exit_status: crate::instance::EXIT_UNSEEN,
            exited_at: MessageField::some(containerd_shim::util::timestamp()?),
            ..DeleteResponse::default()
        })
    }

    fn wait(&mut self) {
        self.exit.wait();
    }

    fn create_task_service(&self, publisher: RemotePublisher) -> TaskService {
        TaskService::new(publisher, self.namespace.clone(), self.containerd_address.clone(), Arc::clone(&self.exit))
    }
}

/// The shim's `main`: `-v` and `-info` answered, the zygote forked (logging to containerd's log
/// as the shim does), then containerd's shim library runs [`WrtShim`].
pub fn main(version: &str) {
    let args: Vec<_> = std::env::args_os().collect();
    let flags = match containerd_shim::parse(&args[1..]) {
        Ok(flags) => flags,
        Err(err) => {
            eprintln!("containerd-shim-wrt-v1: {err}");
            std::process::exit(2);
        }
    };
    if flags.version {
        println!("containerd-shim-wrt-v1:\n  Runtime: {}\n  Version: {version}\n", crate::NAME);
        return;
    }
    if flags.info {
        let info = RuntimeInfo {
            name: crate::NAME.to_owned(),
            version: MessageField::some(RuntimeVersion { version: version.to_owned(), ..RuntimeVersion::default() }),
            ..RuntimeInfo::default()
        };
        let bytes = info.write_to_bytes().unwrap_or_default();
        let _ = std::io::stdout().write_all(&bytes);
        return;
    }
    zygote::Zygote::init();
    let config = Config::default();
    zygote::Zygote::global().run(|debug: bool| ZygoteLog::install(debug), flags.debug);
    containerd_shim::run::<WrtShim>(crate::NAME, Some(config));
}

/// The zygote's logger: its lines (a cache that cannot be used, a guest that does not load) go
/// to containerd's log as the shim's do, through the `log` FIFO containerd opens in the
/// bundle, the shim's working directory.
struct ZygoteLog(std::sync::Mutex<std::fs::File>);

impl ZygoteLog {
    fn install(debug: bool) {
        let Ok(fifo) = std::fs::OpenOptions::new().write(true).open("log") else { return };
        if log::set_boxed_logger(Box::new(ZygoteLog(std::sync::Mutex::new(fifo)))).is_ok() {
            log::set_max_level(if debug { log::LevelFilter::Debug } else { log::LevelFilter::Info });
        }
    }
}

impl log::Log for ZygoteLog {
    fn enabled(&self, metadata: &log::Metadata<'_>) -> bool {
        metadata.level() <= log::max_level()
    }

    fn log(&self, record: &log::Record<'_>) {
        if self.enabled(record.metadata()) {
            let line =
                format!("level={} msg={:?}\n", record.level().as_str().to_lowercase(), record.args().to_string());
            let mut fifo = self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            let _ = fifo.write_all(line.as_bytes());
        }
    }

    fn flush(&self) {}
}
