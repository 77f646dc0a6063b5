/* A fake libcuda for tests: the driver API calls envcheck's CUDA probe makes, answering what
 * the environment says. Built by the tests with the system C compiler.
 *   FAKE_CUDA_INIT      CUresult of cuInit (default 0), or "hang" to block forever
 *   FAKE_CUDA_DEVICES   device count (default 2)
 *   FAKE_CUDA_CTX       CUresult of cuDevicePrimaryCtxRetain on FAKE_CUDA_CTX_DEVICE (default 0)
 *   FAKE_CUDA_NAME      device name (default "NVIDIA H100 80GB HBM3")
 *   FAKE_CUDA_VERSION   cuDriverGetVersion (default 12040)
 *   FAKE_CUDA_PIDFILE   where a hanging cuInit writes its pid (so tests can check it was killed)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef int CUresult;
typedef int CUdevice;

static int env_int(const char *name, int fallback) {
    const char *v = getenv(name);
    return v && *v ? atoi(v) : fallback;
}

CUresult cuInit(unsigned int flags) {
    const char *v = getenv("FAKE_CUDA_INIT");
    (void)flags;
    if (v && strcmp(v, "hang") == 0) {
        const char *pidfile = getenv("FAKE_CUDA_PIDFILE");
        if (pidfile) {
            FILE *f = fopen(pidfile, "w");
            if (f) {
                fprintf(f, "%d\n", (int)getpid());
                fclose(f);
            }
        }
        for (;;) pause();
    }
    return v && *v ? atoi(v) : 0;
}

CUresult cuDriverGetVersion(int *version) {
    *version = env_int("FAKE_CUDA_VERSION", 12040);
    return 0;
}

CUresult cuDeviceGetCount(int *count) {
    *count = env_int("FAKE_CUDA_DEVICES", 2);
    return 0;
}

CUresult cuDeviceGet(CUdevice *device, int ordinal) {
    if (ordinal < 0 || ordinal >= env_int("FAKE_CUDA_DEVICES", 2)) return 101;
    *device = ordinal;
    return 0;
}

CUresult cuDeviceGetName(char *name, int len, CUdevice device) {
    const char *v = getenv("FAKE_CUDA_NAME");
    (void)device;
    strncpy(name, v ? v : "NVIDIA H100 80GB HBM3", (size_t)len - 1);
    name[len - 1] = 0;
    return 0;
}

CUresult cuDevicePrimaryCtxRetain(void **ctx, CUdevice device) {
    if (device == env_int("FAKE_CUDA_CTX_DEVICE", 0) && env_int("FAKE_CUDA_CTX", 0))
        return env_int("FAKE_CUDA_CTX", 0);
    *ctx = (void *)0x1;
    return 0;
}

CUresult cuDevicePrimaryCtxRelease_v2(CUdevice device) {
    (void)device;
    return 0;
}

static const struct { int code; const char *name; } NAMES[] = {
    {0, "CUDA_SUCCESS"}, {2, "CUDA_ERROR_OUT_OF_MEMORY"}, {3, "CUDA_ERROR_NOT_INITIALIZED"},
    {34, "CUDA_ERROR_STUB_LIBRARY"}, {46, "CUDA_ERROR_DEVICE_UNAVAILABLE"},
    {100, "CUDA_ERROR_NO_DEVICE"}, {101, "CUDA_ERROR_INVALID_DEVICE"},
    {214, "CUDA_ERROR_ECC_UNCORRECTABLE"}, {304, "CUDA_ERROR_OPERATING_SYSTEM"},
    {802, "CUDA_ERROR_SYSTEM_NOT_READY"}, {803, "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH"},
    {804, "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE"}, {999, "CUDA_ERROR_UNKNOWN"},
};

CUresult cuGetErrorName(CUresult error, const char **name) {
    for (size_t i = 0; i < sizeof NAMES / sizeof NAMES[0]; i++) {
        if (NAMES[i].code == error) {
            *name = NAMES[i].name;
            return 0;
        }
    }
    return 1; /* CUDA_ERROR_INVALID_VALUE, as the real driver answers an unknown code */
}
