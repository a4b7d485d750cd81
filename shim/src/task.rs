//! containerd's task API (`containerd.task.v2.Task`) for the shim's containers: create, start,
//! kill, delete, wait and state, as every shim serves them, and what the CRI asks of a running
//! container: `Stats` from its cgroup ([`metrics`](crate::metrics)), `Update` of its limits
//! ([`resources`](crate::resources)). `Exec` is refused with what to use instead: a guest's
//! container holds no program to run, and the Kubernetes probes that need none work.

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, RwLock};

use chrono::{DateTime, Utc};
use containerd_shim::api::{
    ConnectRequest, ConnectResponse, CreateTaskRequest, CreateTaskResponse, DeleteRequest, Empty, ExecProcessRequest,
    KillRequest, ShutdownRequest, StartRequest, StartResponse, StateRequest, StateResponse, StatsRequest,
    StatsResponse, UpdateTaskRequest, WaitRequest, WaitResponse,
};
use containerd_shim::event::Event;
use containerd_shim::protos::events::task::{TaskCreate, TaskDelete, TaskExit, TaskIO, TaskStart};
use containerd_shim::protos::protobuf::well_known_types::timestamp::Timestamp;
use containerd_shim::protos::ttrpc::{self, Code};
use containerd_shim::protos::types::task::Status;
use containerd_shim::publisher::RemotePublisher;
use containerd_shim::{DeleteResponse, ExitSignal, Task, TtrpcContext, TtrpcResult};
use containerd_shimkit::sandbox::InstanceConfig;
use runtime_spec::runtime::Spec;

use crate::cgroup::{self, Cgroup};
use crate::instance::WrtInstance;
use crate::options::Options;

/// What an `Exec` (`kubectl exec`, an exec probe, `ctr task exec`) is answered.
pub const EXEC_REFUSED: &str = "exec is not supported by the runtime io.containerd.wrt.v1: a guest's container runs one WebAssembly guest and holds no program to run; probe it with httpGet, tcpSocket or grpc instead of exec";

/// The task service of one shim.
pub struct TaskService {
    containers: RwLock<HashMap<String, Arc<WrtInstance>>>,
    /// What each container was created with.
    configs: RwLock<HashMap<String, InstanceConfig>>,
    publisher: Arc<RemotePublisher>,
    namespace: String,
    containerd_address: String,
    exit: Arc<ExitSignal>,
}

impl std::fmt::Debug for TaskService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let containers = self.containers.read().unwrap_or_else(std::sync::PoisonError::into_inner);
        f.debug_struct("TaskService").field("containers", &containers.keys()).finish_non_exhaustive()
    }
}

/// A ttrpc error of `code`, saying `message`.
fn status(code: Code, message: impl std::fmt::Display) -> ttrpc::Error {
    ttrpc::Error::RpcStatus(ttrpc::get_status(code, message.to_string()))
}

/// A failure of wrt's or youki's, with its causes.
fn internal(err: &anyhow::Error) -> ttrpc::Error {
    status(Code::INTERNAL, format!("{err:#}"))
}

fn timestamp(at: DateTime<Utc>) -> Timestamp {
    Timestamp {
        seconds: at.timestamp(),
        nanos: at.timestamp_subsec_nanos().try_into().unwrap_or(0),
        ..Timestamp::default()
    }
}

/// Refuses a request about an exec'd process: there are none.
fn no_exec(exec_id: &str) -> TtrpcResult<()> {
    if exec_id.is_empty() {
        Ok(())
    } else {
        Err(status(Code::NOT_FOUND, format!("no process {exec_id:?}: {EXEC_REFUSED}")))
    }
}

impl TaskService {
    pub fn new(
        publisher: RemotePublisher,
        namespace: String,
        containerd_address: String,
        exit: Arc<ExitSignal>,
    ) -> Self {
        Self {
            containers: RwLock::default(),
            configs: RwLock::default(),
            publisher: Arc::new(publisher),
            namespace,
            containerd_address,
            exit,
        }
    }

    fn publish(&self, event: impl Event) {
        let topic = event.topic();
        if let Err(err) =
            self.publisher.publish(ttrpc::context::Context::default(), &topic, &self.namespace, Box::new(event))
        {
            log::warn!("failed to publish the event {topic}: {err}");
        }
    }

    fn get(&self, id: &str) -> TtrpcResult<Arc<WrtInstance>> {
        let containers = self.containers.read().unwrap_or_else(std::sync::PoisonError::into_inner);
        containers.get(id).cloned().ok_or_else(|| status(Code::NOT_FOUND, format!("no container {id:?}")))
    }

    fn config(&self, id: &str) -> InstanceConfig {
        let configs = self.configs.read().unwrap_or_else(std::sync::PoisonError::into_inner);
        configs.get(id).cloned().unwrap_or_default()
    }

    /// The cgroup of a container's first process (created or running, not ended).
    fn cgroup_of(&self, id: &str) -> TtrpcResult<Cgroup> {
        let container = self.get(id)?;
        if container.exit().is_some() {
            return Err(status(Code::NOT_FOUND, format!("the container {id:?} has ended")));
        }
        let pid = container.process().map_err(|err| internal(&err))?;
        Cgroup::of_process(pid).map_err(|err| status(Code::NOT_FOUND, format!("{err:#}")))
    }

    fn create_container(&self, req: &CreateTaskRequest) -> anyhow::Result<Result<InstanceConfig, ttrpc::Error>> {
        use anyhow::Context as _;
        let options = match Options::of_request(req.options.as_ref()) {
            Ok(options) => options,
            Err(err) => return Ok(Err(status(Code::INVALID_ARGUMENT, format!("invalid runtime options: {err:#}")))),
        };
        let bundle = Path::new(&req.bundle);
        let mut spec = Spec::load(bundle.join("config.json")).context("the container's spec")?;
        spec.canonicalize_rootfs(bundle).context("the container's root file system")?;
        let rootfs = spec.root().as_ref().context("the container's spec names no root file system")?.path().clone();
        std::fs::create_dir_all(&rootfs).with_context(|| format!("the container's root {rootfs:?}"))?;
        for mount in &req.rootfs {
            let non_empty = |s: &str| (!s.is_empty()).then(|| s.to_owned());
            containerd_shim::mount::mount_rootfs(
                non_empty(&mount.type_).as_deref(),
                non_empty(&mount.source).as_deref(),
                &mount.options,
                &rootfs,
            )
            .with_context(|| format!("failed to mount the container's root file system at {rootfs:?}"))?;
        }
        let cgroups_path = spec.linux().as_ref().and_then(|linux| linux.cgroups_path().clone());
        let systemd_cgroup = match cgroup::uses_systemd(cgroups_path.as_deref(), &options) {
            Ok(systemd) => systemd,
            Err(err) => return Ok(Err(status(Code::INVALID_ARGUMENT, format!("{err:#}")))),
        };
        Ok(Ok(InstanceConfig {
            namespace: self.namespace.clone(),
            containerd_address: self.containerd_address.clone(),
            bundle: bundle.to_owned(),
            stdout: req.stdout.clone().into(),
            stderr: req.stderr.clone().into(),
            stdin: req.stdin.clone().into(),
            config: containerd_shimkit::sandbox::Config { systemd_cgroup },
        }))
    }
}

impl Task for TaskService {
    fn create(&self, _ctx: &TtrpcContext, req: CreateTaskRequest) -> TtrpcResult<CreateTaskResponse> {
        if !req.checkpoint.is_empty() || !req.parent_checkpoint.is_empty() {
            return Err(status(
                Code::UNIMPLEMENTED,
                "checkpoints are not supported by the runtime io.containerd.wrt.v1",
            ));
        }
        if req.terminal {
            return Err(status(
                Code::INVALID_ARGUMENT,
                "a terminal is not supported by the runtime io.containerd.wrt.v1",
            ));
        }
        if self.containers.read().unwrap_or_else(std::sync::PoisonError::into_inner).contains_key(&req.id) {
            return Err(status(Code::ALREADY_EXISTS, format!("the container {:?} exists", req.id)));
        }
        let cfg = self.create_container(&req).map_err(|err| internal(&err))??;
        let instance = WrtInstance::create(&req.id, &cfg).map_err(|err| internal(&err))?;
        self.containers
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .insert(req.id.clone(), Arc::new(instance));
        self.configs.write().unwrap_or_else(std::sync::PoisonError::into_inner).insert(req.id.clone(), cfg);
        self.publish(TaskCreate {
            container_id: req.id.clone(),
            bundle: req.bundle.clone(),
            rootfs: req.rootfs.clone(),
            io: Some(TaskIO {
                stdin: req.stdin.clone(),
                stdout: req.stdout.clone(),
                stderr: req.stderr.clone(),
                ..TaskIO::default()
            })
            .into(),
            ..TaskCreate::default()
        });
        Ok(CreateTaskResponse { pid: std::process::id(), ..CreateTaskResponse::default() })
    }

    fn start(&self, _ctx: &TtrpcContext, req: StartRequest) -> TtrpcResult<StartResponse> {
        no_exec(&req.exec_id)?;
        let container = self.get(&req.id)?;
        if container.pid().is_some() || container.exit().is_some() {
            return Err(status(Code::FAILED_PRECONDITION, format!("the container {:?} was started already", req.id)));
        }
        let pid = container.start().map_err(|err| internal(&err))?;
        self.publish(TaskStart { container_id: req.id.clone(), pid, ..TaskStart::default() });
        let publisher = Arc::clone(&self.publisher);
        let namespace = self.namespace.clone();
        let id = req.id.clone();
        std::thread::spawn(move || {
            let (exit_status, at) = container.wait();
            let event = TaskExit {
                container_id: id.clone(),
                id,
                pid,
                exit_status,
                exited_at: Some(timestamp(at)).into(),
                ..TaskExit::default()
            };
            let topic = event.topic();
            if let Err(err) = publisher.publish(ttrpc::context::Context::default(), &topic, &namespace, Box::new(event))
            {
                log::warn!("failed to publish the event {topic}: {err}");
            }
        });
        Ok(StartResponse { pid, ..StartResponse::default() })
    }

    fn kill(&self, _ctx: &TtrpcContext, req: KillRequest) -> TtrpcResult<Empty> {
        no_exec(&req.exec_id)?;
        let container = self.get(&req.id)?;
        if container.exit().is_some() {
            // What containerd takes for "already gone", as runc's shim answers it.
            return Err(status(Code::NOT_FOUND, "the container's process has already finished"));
        }
        container.kill(req.signal).map_err(|err| internal(&err))?;
        Ok(Empty::new())
    }

    fn delete(&self, _ctx: &TtrpcContext, req: DeleteRequest) -> TtrpcResult<DeleteResponse> {
        no_exec(&req.exec_id)?;
        let container = self.get(&req.id)?;
        if container.pid().is_some() && container.exit().is_none() {
            return Err(status(Code::FAILED_PRECONDITION, format!("the container {:?} is running", req.id)));
        }
        container.delete().map_err(|err| internal(&err))?;
        let (exit_status, at) = container.wait();
        let pid = container.pid().unwrap_or_default();
        self.containers.write().unwrap_or_else(std::sync::PoisonError::into_inner).remove(&req.id);
        self.configs.write().unwrap_or_else(std::sync::PoisonError::into_inner).remove(&req.id);
        self.publish(TaskDelete {
            container_id: req.id.clone(),
            pid,
            exit_status,
            exited_at: Some(timestamp(at)).into(),
            ..TaskDelete::default()
        });
        Ok(DeleteResponse { pid, exit_status, exited_at: Some(timestamp(at)).into(), ..DeleteResponse::default() })
    }

    fn wait(&self, _ctx: &TtrpcContext, req: WaitRequest) -> TtrpcResult<WaitResponse> {
        no_exec(&req.exec_id)?;
        let (exit_status, at) = self.get(&req.id)?.wait();
        Ok(WaitResponse { exit_status, exited_at: Some(timestamp(at)).into(), ..WaitResponse::default() })
    }

    fn state(&self, _ctx: &TtrpcContext, req: StateRequest) -> TtrpcResult<StateResponse> {
        no_exec(&req.exec_id)?;
        let container = self.get(&req.id)?;
        let cfg = self.config(&req.id);
        let exit = container.exit();
        let status = match (container.pid(), exit) {
            (_, Some(_)) => Status::STOPPED,
            (Some(_), None) => Status::RUNNING,
            (None, None) => Status::CREATED,
        };
        Ok(StateResponse {
            id: req.id,
            bundle: cfg.bundle.to_string_lossy().into_owned(),
            stdin: cfg.stdin.to_string_lossy().into_owned(),
            stdout: cfg.stdout.to_string_lossy().into_owned(),
            stderr: cfg.stderr.to_string_lossy().into_owned(),
            pid: container.pid().unwrap_or_default(),
            exit_status: exit.map_or(0, |(status, _)| status),
            exited_at: exit.map(|(_, at)| timestamp(at)).into(),
            status: status.into(),
            ..StateResponse::default()
        })
    }

    fn connect(&self, _ctx: &TtrpcContext, req: ConnectRequest) -> TtrpcResult<ConnectResponse> {
        let container = self.get(&req.id)?;
        Ok(ConnectResponse {
            shim_pid: std::process::id(),
            task_pid: container.pid().unwrap_or_default(),
            ..ConnectResponse::default()
        })
    }

    fn shutdown(&self, _ctx: &TtrpcContext, _req: ShutdownRequest) -> TtrpcResult<Empty> {
        if self.containers.read().unwrap_or_else(std::sync::PoisonError::into_inner).is_empty() {
            self.exit.signal();
        }
        Ok(Empty::new())
    }

    fn stats(&self, _ctx: &TtrpcContext, req: StatsRequest) -> TtrpcResult<StatsResponse> {
        let cgroup = self.cgroup_of(&req.id)?;
        let stats = crate::metrics::of(&cgroup).map_err(|err| internal(&err))?;
        Ok(StatsResponse { stats: Some(stats).into(), ..StatsResponse::default() })
    }

    fn update(&self, _ctx: &TtrpcContext, req: UpdateTaskRequest) -> TtrpcResult<Empty> {
        let resources = crate::resources::of_request(req.resources.as_ref())
            .map_err(|err| status(Code::INVALID_ARGUMENT, format!("{err:#}")))?;
        let cgroup = self.cgroup_of(&req.id)?;
        crate::resources::apply(&cgroup, &resources).map_err(|err| internal(&err))?;
        Ok(Empty::new())
    }

    fn exec(&self, _ctx: &TtrpcContext, _req: ExecProcessRequest) -> TtrpcResult<Empty> {
        Err(status(Code::UNIMPLEMENTED, EXEC_REFUSED))
    }
}
