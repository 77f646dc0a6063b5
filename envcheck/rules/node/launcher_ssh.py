"""NET180: a multi-node launcher could not ssh into a host of its hostfile (DeepSpeed's runner
and its pdsh, mpirun, Horovod): the launcher's own check (`... but host=worker-1 was not
reachable via ssh`, the `ssh -o PasswordAuthentication=no <host> hostname` it runs, exit 255),
pdsh's `ssh exited with exit code 255`, or ssh's own refusal (`Permission denied (publickey)`,
`Host key verification failed`, `connect to host ... port 22: Connection refused`). The line
names the host where it states one; a name ssh cannot resolve stays NET103's."""

from __future__ import annotations

from collections.abc import Iterable

from envcheck.facts.node import Facts
from envcheck.facts.skip import Skip
from envcheck.model.finding import Severity
from envcheck.rules.base import Hit, LogLine, StatedOtherwise, from_log, rule
from envcheck.rules.fixes import fix, manual


@rule("NET180", "launcher-ssh-refused", Severity.ERROR)
def launcher_ssh_refused(facts: Facts) -> Iterable[Hit]:
    """A multi-node launcher cannot open ssh to a host of its hostfile

    ## What it checks
    Only a log says it: a launcher that starts the ranks of other nodes over ssh and could
    not, in the words of the layer that failed: DeepSpeed's runner (`Using hostfile at
    /job/hostfile but host=worker-1 was not reachable via ssh. If you are running with a single
    node please remove /job/hostfile or setup passwordless ssh.`, and the `ssh -o
    PasswordAuthentication=no worker-1 hostname` check that returned 255 before it), pdsh
    (`pdsh@node0: worker-1: ssh exited with exit code 255`), and ssh itself (`Permission denied
    (publickey,password).`, `Host key verification failed.`, `ssh: connect to host worker-1
    port 22: Connection refused`).

    ## Why it matters
    DeepSpeed's default launcher (pdsh) and mpirun start every remote rank with a
    non-interactive ssh from the launching node, even to `localhost` under DeepSpeed's
    autotuning. Without a key the remote host accepts, a known host key, or sshd listening on
    the port the launcher uses, no rank starts on that host.

    ## Example
    Two containers over an overlay network, `deepspeed --hostfile hostfile --num_nodes 2`:
    `CalledProcessError: Command '['ssh', '-o', 'PasswordAuthentication=no', 'manager',
    'hostname']' returned non-zero exit status 255.`

    ## Fix
    Surest first: give the launching node passwordless ssh to every host of the hostfile
    (`ssh-keygen`, `ssh-copy-id <host>`, then `ssh -o BatchMode=yes <host> hostname`
    must print the name), accepting each host key once (`ssh-keyscan <host> >>
    ~/.ssh/known_hosts`); with sshd on another port, DeepSpeed's `--ssh_port`. Where ssh between
    nodes is not possible (Kubernetes pods, some Slurm sites), launch on every node without it:
    `deepspeed --no_ssh --node_rank=<n> --master_addr=<node 0>` on each node, or `torchrun` on
    each node, or `--launcher slurm` / MPI. On a single node, remove the hostfile.

    ## References
    - deepspeedai/DeepSpeed deepspeed/launcher/runner.py (the ssh check and its message;
      `--no_ssh`: 'Launch training independently on each node without ssh setup.';
      `--ssh_port`; `--launcher`)
    - https://www.deepspeed.ai/getting-started/#resource-configuration-multi-node (passwordless
      ssh; launching without it)
    - https://github.com/deepspeedai/DeepSpeed/issues/6875 (`--no_ssh --node_rank=0
      --master_addr=...` started the job the ssh check stopped)
    - https://github.com/deepspeedai/DeepSpeed/issues/2679 (Kubernetes: passwordless ssh
      between pods, or torchrun run on every pod)
    - https://github.com/deepspeedai/DeepSpeed/issues/1603 (no ssh between Slurm nodes: launch
      with MPI instead of DeepSpeed's launcher)
    - https://github.com/huggingface/accelerate/issues/1837 ('For pdsh all the worker needs
      need to be accessible via passwordless ssh from main node'; under Slurm the `standard`
      launcher)
    - https://github.com/deepspeedai/DeepSpeed/issues/4116 (sshd on a port other than 22:
      `--ssh_port`)
    """
    raise Skip("only a log line states a launcher's ssh that failed", "log.network")


def _host(line: LogLine) -> str:
    """The host the line names (DeepSpeed's `host=`, pdsh's `<host>: ssh exited`, ssh's own)."""
    return line.stated.get("ssh_host") or "<host>"


@from_log("NET180")
def launcher_ssh_refused_in_log(facts: Facts, line: LogLine) -> Hit:
    """The launcher's (or ssh's own) line establishes it; the host where the line names it.
    Where ssh said it could not resolve that host's name (or the line names none), the name is
    the cause (NET103's), not the keys or sshd: this reading stands aside."""
    host = _host(line)
    unresolved = line.stated.get("unresolved_host")
    if unresolved and host in (unresolved, "<host>"):
        raise StatedOtherwise(
            f"ssh could not resolve {unresolved} (the log says so): the hostfile's name is the "
            "cause, not the keys or sshd on that host"
        )
    return Hit(
        f"the launcher could not open ssh to {host} (line {line.line}): no rank starts on a host "
        "the launching node cannot ssh into without a password",
        evidence={"line": line.line, "host": host},
        fix=fix(
            f"Give the launching node passwordless ssh to {host} (and every host of the "
            "hostfile); where ssh between nodes is not possible, launch on each node without it "
            "(deepspeed --no_ssh --node_rank=<n> --master_addr=<node 0>, or torchrun on each "
            "node); on a single node, remove the hostfile",
            "manual",
            manual(f"ssh-keygen -t ed25519 && ssh-copy-id {host}"),
            manual(f"ssh-keyscan {host} >> ~/.ssh/known_hosts   # accept its host key once"),
            # BatchMode=yes: no password prompt, as the launcher's own check (whose
            # 'PasswordAuthentication=no' the output's secret redaction would mask)
            manual(f"ssh -o BatchMode=yes {host} hostname   # must print its name"),
            manual("deepspeed --ssh_port <port> ...   # where sshd listens on another port"),
            manual(
                "or on every node: deepspeed --hostfile=hostfile --no_ssh --node_rank=<n> "
                "--master_addr=<node 0's address> train.py"
            ),
        ),
    )
