"""The NCCL / Gloo / torch.distributed / Ray network family's wordings, as their sources print
them across releases: (line, source, expected cause code). Each line is the library's own format
string filled with real-format values; the source names the file and the release it is read from.

Read by ``test_nccl_phrasings.py``; kept apart so the table can be measured on its own."""

from __future__ import annotations

_DS = "https://github.com/deepspeedai/DeepSpeed/blob/master/deepspeed/launcher/runner.py"

_NCCL = "https://github.com/NVIDIA/nccl/blob/"
_GLOO = "https://github.com/pytorch/gloo/blob/main/gloo/transport/"
_C10D = "https://github.com/pytorch/pytorch/blob/main/torch/csrc/distributed/c10d/"
_P = "gpu1:100:200 [0] "

PHRASINGS: tuple[tuple[str, str, str], ...] = (
    # --- NCCL socket connect, three generations of the same failure -----------------------------
    # 2.8: bare "Connect to %s failed : %s"
    (
        _P + "misc/socket.cc:384 NCCL WARN Connect to 10.1.2.3<41245> failed : No route to host",
        _NCCL + "v2.8.4-1/src/include/socket.h",
        "NET104",
    ),
    # 2.12-2.20: socketStartConnect / socketPollConnect
    (
        _P + "misc/socket.cc:484 NCCL WARN socketStartConnect: Connect to 10.1.2.3<41245> failed : "
        "Connection timed out",
        _NCCL + "v2.18.3-1/src/misc/socket.cc",
        "NET104",
    ),
    (
        _P + "misc/socket.cc:567 NCCL WARN socketPollConnect: exceeded retries (34)",
        _NCCL + "v2.18.3-1/src/misc/socket.cc",
        "NET104",
    ),
    (
        _P + "misc/socket.cc:558 NCCL WARN socketPollConnect poll() failed with error Connection "
        "refused",
        _NCCL + "v2.18.3-1/src/misc/socket.cc",
        "NET104",
    ),
    # 2.27+: the funcName-prefixed form in src/os/linux.cc
    (
        _P + "os/linux.cc:302 NCCL WARN socketStartConnect: connect to 10.1.2.3<41245> failed : "
        "No route to host",
        _NCCL + "v2.30.7-1/src/os/linux.cc",
        "NET104",
    ),
    (
        _P + "os/linux.cc:288 NCCL WARN socketStartConnect: connect to 10.1.2.3<41245> returned "
        "Connection refused, exceeded error retry count after 35 attempts",
        _NCCL + "v2.30.7-1/src/os/linux.cc",
        "NET104",
    ),
    (
        _P
        + "os/linux.cc:377 NCCL WARN ncclOsSocketPollConnect to 10.1.2.3<41245> failed with error "
        "Connection refused",
        _NCCL + "v2.30.7-1/src/os/linux.cc",
        "NET104",
    ),
    # --- NCCL socket receive: the peer went away ---------------------------------------------
    (
        _P + "include/socket.h:423 NCCL WARN Net : Connection closed by remote peer",
        _NCCL + "v2.8.4-1/src/include/socket.h",
        "NET104",
    ),
    (
        _P + "include/socket.h:409 NCCL WARN Call to recv failed : Connection reset by peer",
        _NCCL + "v2.8.4-1/src/include/socket.h",
        "NET104",
    ),
    (
        _P + "misc/socket.cc:49 NCCL WARN socketProgressOpt: Call to recv from 10.1.2.3<41245> "
        "failed : Connection reset by peer",
        _NCCL + "v2.18.3-1/src/misc/socket.cc",
        "NET104",
    ),
    (
        _P + "os/linux.cc:190 NCCL WARN ncclOsSocketProgressOpt: Call to recv from 10.1.2.3<41245> "
        "failed : Broken pipe",
        _NCCL + "v2.30.7-1/src/os/linux.cc",
        "NET104",
    ),
    # --- NCCL socket creation / address family ------------------------------------------------
    (
        _P + "include/socket.h:434 NCCL WARN Net : Socket creation failed : Address family not "
        "supported by protocol",
        _NCCL + "v2.8.4-1/src/include/socket.h",
        "NET101",
    ),
    (
        _P + "misc/socket.cc:441 NCCL WARN ncclSocketInit: Socket creation failed : Address family "
        "not supported by protocol",
        _NCCL + "v2.18.3-1/src/misc/socket.cc",
        "NET101",
    ),
    (
        _P
        + "include/socket.h:379 NCCL WARN Error : connecting to address with family 0 is neither "
        "AF_INET(2) nor AF_INET6(10)",
        _NCCL + "v2.8.4-1/src/include/socket.h",
        "NET121",
    ),
    (
        _P + "misc/socket.cc:458 NCCL WARN ncclSocketInit: connecting to address  with family 0 is "
        "neither AF_INET(2) nor AF_INET6(10)",
        _NCCL + "v2.18.3-1/src/misc/socket.cc",
        "NET121",
    ),
    # --- NCCL interfaces -----------------------------------------------------------------------
    (
        _P + "bootstrap.cc:45 NCCL WARN Bootstrap : no socket interface found",
        _NCCL + "v2.30.7-1/src/bootstrap.cc",
        "NET101",
    ),
    (
        _P
        + "transport/net_socket.cc:46 NCCL WARN NET/Socket : No usable listening interface found",
        _NCCL + "v2.30.7-1/src/transport/net_socket.cc",
        "NET101",
    ),
    (
        _P + "misc/socket.cc:331 NCCL WARN Net : No interface found in the same subnet as remote "
        "address 10.1.2.3<41245>",
        _NCCL + "v2.18.3-1/src/misc/socket.cc",
        "NET104",
    ),
    (
        _P + "misc/socket.cc:381 NCCL WARN Net : error encountered when getting address info : "
        "Name or service not known",
        _NCCL + "v2.18.3-1/src/misc/socket.cc",
        "NET103",
    ),
    # --- NCCL ranks that disagree --------------------------------------------------------------
    (
        _P
        + "init.cc:1043 NCCL WARN Mismatched NCCL version detected : rank 0 version 22703 rank 8 "
        "version 22105",
        _NCCL + "v2.30.7-1/src/init.cc",
        "NET121",
    ),
    (
        _P + "bootstrap.cc:320 NCCL WARN Bootstrap Root : mismatch in rank count from procs 8 : 16",
        _NCCL + "v2.18.3-1/src/bootstrap.cc",
        "NET121",
    ),
    # --- NCCL shared memory (SYS101), 2.18 and 2.30 wordings -----------------------------------
    (
        _P + "misc/shmutils.cc:61 NCCL WARN Error: failed to extend /dev/shm/nccl-xY9Abc to "
        "9637892 bytes",
        _NCCL + "v2.18.3-1/src/misc/shmutils.cc",
        "SYS101",
    ),
    (
        _P + "os/linux.cc:642 NCCL WARN Error: failed to extend /dev/shm/nccl-xY9Abc to 9637892 "
        "bytes, error: No space left on device (28)",
        _NCCL + "v2.30.7-1/src/os/linux.cc",
        "SYS101",
    ),
    (
        _P + "os/linux.cc:620 NCCL WARN Error: failed to create shared memory file "
        "/dev/shm/nccl-xY9Abc, error Permission denied (13)",
        _NCCL + "v2.30.7-1/src/os/linux.cc",
        "SYS101",
    ),
    (
        _P + "os/linux.cc:690 NCCL WARN Error while creating shared memory segment "
        "/dev/shm/nccl-xY9Abc (size 9637888), error: No space left on device (28)",
        _NCCL + "v2.30.7-1/src/os/linux.cc",
        "SYS101",
    ),
    # --- NCCL InfiniBand (NET150) --------------------------------------------------------------
    (
        _P + "transport/net_ib.cc:1295 NCCL WARN NET/IB : Got completion with error 12, opcode 1, "
        "len 0, vendor err 129",
        _NCCL + "v2.8.4-1/src/transport/net_ib.cc",
        "NET150",
    ),
    (
        _P + "transport/net_ib/common.cc:1500 NCCL WARN NET/IB: Got completion from peer "
        "10.1.2.3<41245> with status=IBV_WC_RETRY_EXC_ERR(12) opcode=IBV_WC_SEND(0) vendor_err=129 "
        "hca mlx5_0",
        _NCCL + "v2.30.7-1/src/transport/net_ib",
        "NET150",
    ),
    (
        _P + "transport/net_ib.cc:88 NCCL WARN NET/IB : mlx5_0:1 async fatal event: local "
        "catastrophic error",
        _NCCL + "v2.30.7-1/src/transport/net_ib",
        "NET150",
    ),
    (
        _P + "transport/net_ib.cc:199 NCCL WARN NET/IB : Got async event : port error",
        _NCCL + "v2.18.3-1/src/transport/net_ib.cc",
        "NET150",
    ),
    # --- Gloo (tcp and libuv transports) -------------------------------------------------------
    (
        "RuntimeError: [enforce fail at ../third_party/gloo/gloo/transport/tcp/device.cc:84] "
        "ifa != nullptr. Unable to find address for: eth0",
        _GLOO + "tcp/device.cc",
        "NET101",
    ),
    (
        "RuntimeError: [enforce fail at C:\\cb\\pytorch_1000000000000\\work\\third_party\\gloo\\gloo"
        "\\transport\\uv\\device.cc:165] Unable to find address for: Ethernet",
        _GLOO + "uv/device.cc",
        "NET101",
    ),
    (
        "RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:554] Connection closed by "
        "peer [10.1.2.3]:21523",
        _GLOO + "tcp/pair.cc",
        "NET104",
    ),
    (
        "RuntimeError: [/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:523] Read timeout "
        "[10.1.2.3]:21523",
        _GLOO + "tcp/pair.cc",
        "NET104",
    ),
    (
        "RuntimeError: [/pytorch/third_party/gloo/gloo/transport/tcp/pair.h:311] Connect timeout "
        "[10.1.2.3]:21523",
        _GLOO + "tcp/pair.h",
        "NET104",
    ),
    (
        "RuntimeError: [/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:812] Socket closed "
        "[10.1.2.3]:21523",
        _GLOO + "tcp/pair.cc",
        "NET104",
    ),
    (
        "RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:799] connect "
        "[127.0.1.1]:39291: Connection refused",
        _GLOO + "tcp/pair.cc",
        "NET103",
    ),
    (
        "RuntimeError: [../third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:81] Timed out "
        "waiting 1800000ms for recv operation to complete",
        _GLOO + "tcp/unbound_buffer.cc",
        "NET170",
    ),
    # Gloo after pytorch/gloo d2609ab (connection retries): the SO_ERROR and its remote
    (
        "RuntimeError: Gloo connectFullMesh failed with [/pytorch/third_party/gloo/gloo/transport/"
        "tcp/pair.cc:152] timed out connecting: SO_ERROR: Connection refused, "
        "remote=[127.0.0.1]:14215",
        _GLOO + "tcp/error.cc",
        "NET103",
    ),
    (
        "[E1128 12:00:00.000 debug_logger.cc:19] failed to connect, willRetry=1, retry=0, "
        "retryLimit=3, rank=8, size=16, local=[127.0.0.1]:40112, remote=[127.0.1.1]:14215, "
        "error=SO_ERROR: Connection refused, remote=[127.0.1.1]:14215",
        _GLOO + "tcp/debug_logger.cc",
        "NET103",
    ),
    # --- torch.distributed c10d store / socket -------------------------------------------------
    (
        "[W socket.cpp:663] [c10d] The client socket has failed to connect to [node-0]:29500 "
        "(errno: 110 - Connection timed out).",
        _C10D + "socket.cpp",
        "NET104",
    ),
    (
        "torch.distributed.DistNetworkError: The client socket has timed out after 900s while "
        "trying to connect to (10.1.2.3, 29500).",
        _C10D + "socket.cpp",
        "NET104",
    ),
    (
        "torch.distributed.DistNetworkError: Failed to recv, got 0 bytes. Connection was likely "
        "closed. Did the remote server shutdown or crash?",
        _C10D + "Utils.hpp",
        "NET104",
    ),
    (
        "[W1128 12:00:00.000 TCPStore.cpp:125] [c10d] recvValue failed on SocketImpl(fd=77, "
        "addr=[::ffff:10.1.2.4]:39732, remote=[::ffff:10.1.2.3]:29500): failed to recv, got 0 "
        "bytes",
        _C10D + "TCPStore.cpp",
        "NET104",
    ),
    (
        "torch.distributed.DistBackendError: [3] is setting up NCCL communicator and retrieving "
        "ncclUniqueId from [0] via c10d key-value store by key '0', but store->get('0') got error: "
        "Socket Timeout",
        _C10D + "ProcessGroupNCCL.cpp",
        "NET104",
    ),
    (
        "RuntimeError: Timed out initializing process group in store based barrier on rank: 0, for "
        "key: store_based_barrier_key:1 (world_size=2, worker_count=1, timeout=0:30:00)",
        "https://github.com/pytorch/pytorch/blob/v1.13.1/torch/distributed/distributed_c10d.py",
        "NET104",
    ),
    (
        "torch.distributed.DistStoreError: Timed out after 901 seconds waiting for clients. 1/2 "
        "clients joined.",
        _C10D + "TCPStore.cpp",
        "NET104",
    ),
    (
        "[E socket.cpp:860] [c10d] The server socket has failed to listen on any local network "
        "address. The server socket has failed to bind to [::]:29500 (errno: 98 - Address already "
        "in use).",
        _C10D + "socket.cpp",
        "NET160",
    ),
    (
        "torch.distributed.DistNetworkError: The server socket has failed to listen on any local "
        "network address. port: 29500, useIpv6: 0, code: -98, name: EADDRINUSE, message: address "
        "already in use",
        _C10D + "socket.cpp",
        "NET160",
    ),
    (
        "[W socket.cpp:697] [c10d] The IPv6 network addresses of (node-1, 29500) cannot be "
        "retrieved (gai error: -2 - Name or service not known).",
        _C10D + "socket.cpp",
        "NET103",
    ),
    (
        "ValueError: Error initializing torch.distributed using env:// rendezvous: environment "
        "variable MASTER_ADDR expected, but not set",
        "https://github.com/pytorch/pytorch/blob/main/torch/distributed/rendezvous.py",
        "NET161",
    ),
    # torchrun's elastic rendezvous: the bare exception class
    (
        "torch.distributed.elastic.rendezvous.api.RendezvousTimeoutError",
        "https://github.com/pytorch/pytorch/blob/main/torch/distributed/elastic/rendezvous/"
        "dynamic_rendezvous.py",
        "NET170",
    ),
    # --- NCCL timeouts seen through torch ------------------------------------------------------
    (
        "[rank1]:[E1128 12:00:00.000 ProcessGroupNCCL.cpp:632] [Rank 1] Watchdog caught collective "
        "operation timeout: WorkNCCL(SeqNum=1, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, "
        "Timeout(ms)=600000) ran for 600023 milliseconds before timing out.",
        _C10D + "ProcessGroupNCCL.cpp",
        "NET170",
    ),
    (
        "[E ProcessGroupNCCL.cpp:475] Some NCCL operations have failed or timed out. Due to the "
        "asynchronous nature of CUDA kernels, subsequent GPU operations might run on corrupted/"
        "incomplete data.",
        _C10D + "ProcessGroupNCCL.cpp",
        "NET170",
    ),
    # --- Ray ----------------------------------------------------------------------------------
    (
        "[2026-11-28 12:00:00,000 E 123 456] gcs_rpc_client.h:179: Failed to connect to GCS at "
        "address 10.1.2.3:6379 within 5 seconds.",
        "https://github.com/ray-project/ray/blob/master/src/ray/gcs/gcs_client/gcs_client.cc",
        "RAY110",
    ),
    # --- launchers ----------------------------------------------------------------------------
    (
        "ssh: Could not resolve hostname worker-1: Name or service not known",
        "https://github.com/openssh/openssh-portable/blob/master/ssh.c",
        "NET103",
    ),
    # DeepSpeed's runner, its ssh check, and pdsh/ssh under its per-host prefix (NET180)
    (
        "RuntimeError: Using hostfile at /job/hostfile but host=worker-1 was not reachable via "
        "ssh. If you are running with a single node please remove /job/hostfile or setup "
        "passwordless ssh.",
        _DS,
        "NET180",
    ),
    (
        "subprocess.CalledProcessError: Command 'ssh -o PasswordAuthentication=no worker-1 "
        "hostname' returned non-zero exit status 255.",
        _DS,
        "NET180",
    ),
    (
        "subprocess.CalledProcessError: Command '['ssh', '-o', 'PasswordAuthentication=no', "
        "'-p', '2222', 'worker-1', 'hostname']' returned non-zero exit status 255.",
        _DS,
        "NET180",
    ),
    (
        "pdsh@node-0: worker-1: ssh exited with exit code 255",
        "https://github.com/deepspeedai/DeepSpeed/issues/5709",
        "NET180",
    ),
    (
        "worker-1: root@worker-1: Permission denied (publickey).",
        "https://github.com/deepspeedai/DeepSpeed/issues/5709",
        "NET180",
    ),
    (
        "worker-1: Host key verification failed.",
        "https://github.com/openssh/openssh-portable/blob/master/sshconnect.c",
        "NET180",
    ),
    (
        "worker-1: ssh: connect to host worker-1 port 22: Connection refused",
        "https://github.com/openssh/openssh-portable/blob/master/sshconnect.c",
        "NET180",
    ),
    # --- Ray: the same node death in Ray >= 2.10's words ----------------------------------------
    (
        "Unexpected termination: health check failed due to missing too many heartbeats",
        "https://github.com/ray-project/ray/blob/master/src/ray/gcs/gcs_server/gcs_node_manager.cc",
        "SYS190",
    ),
)
