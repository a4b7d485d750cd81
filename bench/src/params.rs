//! The registry of the workloads: [`Params`], one configuration of any workload, the one place
//! that knows every workload ([`Params::workload`]); a grid of configurations from lists of
//! [`Setting`]s ([`Params::grid`]), and `--compare 'KEY=VALUE'` applied to a configuration
//! ([`Params::apply`]). Each workload owns its parameters, in its own file; the pieces they are
//! made of are in `setting.rs`, below them all.

use std::fmt;

use serde::Serialize;

pub use crate::buffer::BufferParams;
pub use crate::component::{ComponentSpawnParams, ComponentStartupParams};
pub use crate::instantiate::{InstantiateParams, MAX_THREADS};
pub use crate::overhead::SpawnOverheadParams;
pub use crate::pipeline::PipelineParams;
pub use crate::real::{MAX_FILES, RealParams};
pub use crate::serve::{MAX_CLIENTS, ServeParams};
pub use crate::setting::{
    BufferGuest, InstantiateGuest, Method, ParamError, RealCase, RunConfig, Setting, Strategy, size,
};
pub use crate::spawn::SpawnParams;
pub use crate::startup::StartupParams;
use crate::workload::{self, Workload};

/// The parameters of one configuration of a workload.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "workload", rename_all = "kebab-case")]
pub enum Params {
    /// `wrt bench spawn`
    Spawn(SpawnParams),
    /// `wrt bench buffer`
    Buffer(BufferParams),
    /// `wrt bench startup`
    Startup(StartupParams),
    /// `wrt bench instantiate`
    Instantiate(InstantiateParams),
    /// `wrt bench pipeline`
    Pipeline(PipelineParams),
    /// `wrt bench component-spawn`
    ComponentSpawn(ComponentSpawnParams),
    /// `wrt bench component-startup`
    ComponentStartup(ComponentStartupParams),
    /// `wrt bench spawn-overhead`
    SpawnOverhead(SpawnOverheadParams),
    /// `wrt bench real`
    Real(RealParams),
    /// `wrt bench serve`
    Serve(ServeParams),
}

impl Params {
    /// The workload this configuration is of: the one registration of each workload.
    pub fn workload(&self) -> &dyn Workload {
        match self {
            Params::Spawn(p) => p,
            Params::Buffer(p) => p,
            Params::Startup(p) => p,
            Params::Instantiate(p) => p,
            Params::Pipeline(p) => p,
            Params::ComponentSpawn(p) => p,
            Params::ComponentStartup(p) => p,
            Params::SpawnOverhead(p) => p,
            Params::Real(p) => p,
            Params::Serve(p) => p,
        }
    }

    /// The workload this configuration is of, to set its parameters.
    pub fn workload_mut(&mut self) -> &mut dyn Workload {
        match self {
            Params::Spawn(p) => p,
            Params::Buffer(p) => p,
            Params::Startup(p) => p,
            Params::Instantiate(p) => p,
            Params::Pipeline(p) => p,
            Params::ComponentSpawn(p) => p,
            Params::ComponentStartup(p) => p,
            Params::SpawnOverhead(p) => p,
            Params::Real(p) => p,
            Params::Serve(p) => p,
        }
    }

    /// The workload's name, as in `wrt bench <name>`.
    pub fn name(&self) -> &'static str {
        self.workload().name()
    }

    /// The keys [`Params::apply`] knows for this workload.
    pub fn keys(&self) -> &'static [&'static str] {
        self.workload().keys()
    }

    /// Parses `value` for the parameter `key` of this workload (as the flag is spelled,
    /// without `--`). This is the only parser of parameter strings.
    ///
    /// # Errors
    ///
    /// An unknown key, or a value that does not parse.
    pub fn parse(&self, key: &str, value: &str) -> Result<Setting, ParamError> {
        let workload = self.workload();
        let key = workload.aliases().iter().find(|(alias, _)| *alias == key).map_or(key, |(_, key)| key);
        // The current value says the type of the parameter.
        let current = workload.get(key).ok_or_else(|| ParamError::unknown(workload.name(), workload.keys(), key))?;
        let setting = current.parsed(value)?;
        // The ranges are checked once, on the typed value.
        self.clone().set(setting).map_err(|e| match e {
            ParamError::BadValue { key, reason, .. } => ParamError::BadValue { key, value: value.to_owned(), reason },
            other => other,
        })?;
        Ok(setting)
    }

    /// Sets one parameter.
    ///
    /// # Errors
    ///
    /// A setting this workload does not have, or a value out of its range.
    pub fn set(&mut self, setting: Setting) -> Result<(), ParamError> {
        if let Setting::N(0) = setting {
            return Err(setting.out_of_range("must be at least 1"));
        }
        self.workload_mut().set(setting)
    }

    /// Every combination of the axes' values, from `self` (an empty axis keeps its value):
    /// the first axis varies slowest.
    ///
    /// # Errors
    ///
    /// As [`Params::set`].
    pub fn grid(self, axes: &[Vec<Setting>]) -> Result<Vec<Params>, ParamError> {
        let mut configs = vec![self];
        for axis in axes.iter().filter(|axis| !axis.is_empty()) {
            let mut next = Vec::with_capacity(configs.len() * axis.len());
            for config in &configs {
                for &setting in axis {
                    let mut config = config.clone();
                    config.set(setting)?;
                    next.push(config);
                }
            }
            configs = next;
        }
        Ok(configs)
    }

    /// Applies `KEY=VALUE`.
    ///
    /// # Errors
    ///
    /// As [`Params::set`], or no `=`.
    pub fn apply(&mut self, key_value: &str) -> Result<(), ParamError> {
        let (key, value) = key_value.split_once('=').ok_or_else(|| ParamError::NotKeyValue(key_value.to_owned()))?;
        let setting = self.parse(key.trim_start_matches("--"), value)?;
        self.set(setting)
    }

    /// The value of `key` as [`Params::apply`] would take it back.
    pub fn get(&self, key: &str) -> Option<String> {
        self.workload().get(key).map(|setting| setting.value())
    }
}
impl fmt::Display for Params {
    /// The parameters as `key=value` pairs, in [`Params::keys`] order.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&workload::key_values(self.workload()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spawn() -> Params {
        Params::Spawn(SpawnParams {
            n: 10,
            heap: 0,
            external: 0,
            strategy: Strategy::PosixSpawn,
            dontfork: true,
            sandbox: false,
            method: Method::Spawn,
            view: true,
        })
    }

    #[test]
    fn set_and_get_round_trip() {
        let mut p = spawn();
        for kv in ["heap=600MiB", "strategy=fork-exec", "dontfork=off", "method=shell", "n=5", "external=1GiB"] {
            p.apply(kv).unwrap();
            let (k, v) = kv.split_once('=').unwrap();
            assert_eq!(p.get(k).as_deref(), Some(v));
        }
        assert_eq!(
            p.to_string(),
            "n=5 heap=600MiB external=1GiB strategy=fork-exec dontfork=off method=shell sandbox=off"
        );
    }

    #[test]
    fn bad_keys_and_values_are_named() {
        let mut p = spawn();
        assert_eq!(p.apply("heap"), Err(ParamError::NotKeyValue("heap".into())));
        let err = p.apply("colour=red").unwrap_err().to_string();
        assert!(err.contains("`colour` is not a parameter of `wrt bench spawn`") && err.contains("heap"), "{err}");
        for kv in ["heap=lots", "n=0", "n=-1", "strategy=vfork", "dontfork=maybe", "method=exec"] {
            let err = p.apply(kv).unwrap_err();
            assert!(matches!(err, ParamError::BadValue { .. }), "{kv}: {err}");
            assert!(err.to_string().contains(kv.split_once('=').unwrap().1), "{err}");
        }
        let mut b = Params::Buffer(BufferParams {
            n: 1,
            body_size: 1,
            guest: BufferGuest::Rust,
            gc: true,
            gc_young: Some(1),
            gc_soft_limit: 1,
            gc_growth: 2.0,
        });
        assert!(b.apply("guest=python").is_err());
        assert!(b.apply("body-size=0").is_err());
        b.apply("guest=assemblyscript").unwrap();
        b.apply("iterations=7").unwrap();
        assert_eq!(b.get("n").as_deref(), Some("7"));
        assert!(b.apply("spawns=7").is_err());
        assert_eq!(b.get("guest").as_deref(), Some("assemblyscript"));
        // A young trigger given is kept; `adapting` names the default, which adapts.
        assert_eq!(b.get("gc-young").as_deref(), Some("1"));
        b.apply("gc-young=adapting").unwrap();
        assert_eq!(b.get("gc-young").as_deref(), Some("adapting"));
        assert_eq!(Params::Buffer(BufferParams::default()).get("gc-young").as_deref(), Some("adapting"));
        b.apply("gc-young=2MiB").unwrap();
        assert_eq!(b.get("gc-young").as_deref(), Some("2MiB"));
        assert!(matches!(b.apply("gc-young=adapt"), Err(ParamError::BadValue { .. })));
    }

    #[test]
    fn typed_grids_vary_the_first_axis_slowest() {
        let axes = [
            vec![Setting::Strategy(Strategy::PosixSpawn), Setting::Strategy(Strategy::ForkExec)],
            vec![],
            vec![Setting::Heap(0), Setting::Heap(600 << 20)],
        ];
        let configs = spawn().grid(&axes).unwrap();
        let shown: Vec<String> =
            configs.iter().map(|c| format!("{} {}", c.get("strategy").unwrap(), c.get("heap").unwrap())).collect();
        assert_eq!(shown, ["posix-spawn 0", "posix-spawn 600MiB", "fork-exec 0", "fork-exec 600MiB"]);
        assert!(matches!(spawn().grid(&[vec![Setting::Guest(BufferGuest::Rust)]]), Err(ParamError::UnknownKey { .. })));
        assert!(matches!(spawn().grid(&[vec![Setting::N(0)]]), Err(ParamError::BadValue { .. })));
    }

    #[test]
    fn instantiate_keys_parse_and_check_their_range() {
        let mut p = Params::Instantiate(InstantiateParams {
            n: 10,
            guest: InstantiateGuest::Trivial,
            config: RunConfig::Defaults,
            threads: 1,
        });
        for kv in ["guest=hello", "config=all", "threads=4", "instantiations=7"] {
            p.apply(kv).unwrap();
        }
        assert_eq!(p.to_string(), "n=7 guest=hello config=all threads=4");
        for kv in ["guest=rust", "config=none", "threads=0", "threads=65", "body-size=1"] {
            assert!(p.apply(kv).is_err(), "{kv}");
        }
        // `guest` names the buffer workload's guests there, and only those.
        let mut b = Params::Buffer(BufferParams {
            n: 1,
            body_size: 1,
            guest: BufferGuest::Rust,
            gc: true,
            gc_young: Some(1),
            gc_soft_limit: 1,
            gc_growth: 2.0,
        });
        assert!(b.apply("guest=hello").is_err());
        assert!(b.set(Setting::InstantiateGuest(InstantiateGuest::Hello)).is_err());
    }

    #[test]
    fn pipeline_bytes_are_a_size_of_at_least_one_byte() {
        let mut p = Params::Pipeline(PipelineParams { bytes: 1 });
        p.apply("bytes=1GiB").unwrap();
        assert_eq!(p.to_string(), "bytes=1GiB");
        p.apply("n=3MiB").unwrap();
        assert_eq!(p.get("bytes").as_deref(), Some("3MiB"));
        for kv in ["bytes=0", "bytes=lots", "bytes=-1"] {
            let err = p.apply(kv).unwrap_err();
            assert!(matches!(err, ParamError::BadValue { .. }), "{kv}: {err}");
        }
        assert!(p.apply("bytes=0").unwrap_err().to_string().contains("at least 1 byte"));
        assert!(matches!(p.apply("heap=0"), Err(ParamError::UnknownKey { .. })));
    }

    #[test]
    fn real_keys_parse_and_check_their_range() {
        let mut p = Params::Real(RealParams { n: 10, files: 2000, bytes: 100 << 20, case: RealCase::TreeSearchCore });
        assert_eq!(p.to_string(), "n=10 files=2000 bytes=100MiB case=tree-search-core");
        for kv in ["processes=3", "files=50", "bytes=1MiB", "case=emit-core"] {
            p.apply(kv).unwrap();
        }
        assert_eq!(p.to_string(), "n=3 files=50 bytes=1MiB case=emit-core");
        for kv in ["files=0", "files=1000001", "bytes=0", "n=0", "case=grep", "heap=0"] {
            assert!(p.apply(kv).is_err(), "{kv}");
        }
        assert!(p.apply("files=0").unwrap_err().to_string().contains("must be between 1 and 1000000"));
        let cases: Vec<&str> = RealCase::ALL.iter().map(|c| c.name()).collect();
        assert_eq!(
            cases,
            ["tree-search-core", "tree-search-component", "hexdump-core", "hexdump-component", "emit-core"]
        );
    }

    #[test]
    fn sizes_print_in_their_unit() {
        assert_eq!(size(0), "0");
        assert_eq!(size(600 << 20), "600MiB");
        assert_eq!(size(2 << 30), "2GiB");
        assert_eq!(size(1000), "1000");
    }
}
