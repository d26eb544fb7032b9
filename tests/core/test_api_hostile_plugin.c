/* Hostile arguments: operator plugins (mxp/plugin.h) and the profiler
 * (mxp/profile.h).  No plugin is loaded here (the loader's refusals of bad
 * plugins are tests/plugin/test_plugin_hostile.c's). */
#include <stdio.h>

#include "core/api_hostile.h"

void hostile_plugin(hctx *c)
{
    const mxp_array *a = H.f32_23;
    float *f = H.buf_f32;
    mxp_array *out = NULL;
    int n = 0;
    mxp_op_info info = { 0 };
    mxp_op_check_report rep = { 0 };

    ERR("path NULL", mxp_ops_load, NULL, &n);
    ERR("path empty", mxp_ops_load, "", &n);
    ERR("a file that does not exist", mxp_ops_load, "/nonexistent/libx.so", &n);
    ERR("a directory", mxp_ops_load, "/tmp", NULL);
    ERR("not a shared library", mxp_ops_load, "/etc/hostname", NULL);
    VAL("nothing loaded", 0, mxp_op_count);
    ERR("index 0 of none", mxp_op_info_at, 0, &info);
    ERR("index -1", mxp_op_info_at, -1, &info);
    ERR("info NULL", mxp_op_info_at, 0, NULL);
    ERR("name NULL", mxp_op_info_by_name, NULL, &info);
    ERR("name not loaded", mxp_op_info_by_name, "gelu", &info);
    ERR("name not loaded", mxp_op_kernel_at, "gelu", 0, NULL, NULL, NULL, NULL);
    ERR("name NULL", mxp_op_kernel_at, NULL, 0, NULL, NULL, NULL, NULL);
    STR("kind 9999", "invalid", mxp_op_kind_name, (mxp_op_kind)9999);
    ERR("out NULL", mxp_op_call, NULL, "gelu", &a, 1, NULL);
    ERR("name NULL", mxp_op_call, &out, NULL, &a, 1, NULL);
    ERR("name not loaded", mxp_op_call, &out, "gelu", &a, 1, NULL);
    ERR("inputs NULL, n_in -1", mxp_op_call, &out, "gelu", NULL, -1, NULL);
    ERR("opts struct_size 3", mxp_op_call, &out, "gelu", &a, 1, &(mxp_op_call_opts){ .struct_size = 3 });
    ERR("out NULL", mxp_op_call_into, NULL, "gelu", &a, 1, NULL);
    ERR("name not loaded", mxp_op_call_into, H.f32_32, "gelu", &a, 1, NULL);
    ERR("n_reports NULL", mxp_op_check, "gelu", NULL, &rep, 1, NULL);
    ERR("reports NULL, cap 1", mxp_op_check, "gelu", NULL, NULL, 1, &n);
    ERR("cap -1", mxp_op_check, "gelu", NULL, &rep, -1, &n);
    ERR("name not loaded", mxp_op_check, "gelu", NULL, &rep, 1, &n);
    ERR("dtype 9999", mxp_op_check_compare, f, f, BAD_DT, 4, &rep);
    ERR("got NULL, n 4", mxp_op_check_compare, NULL, f, MXP_F32, 4, &rep);
    ERR("report struct_size 7", mxp_op_check_compare, f, f, MXP_F32, 4, &(mxp_op_check_report){ .struct_size = 7 });

    STR("verdict 9999", "invalid", mxp_verdict_name, (mxp_verdict)9999);
    ERR("no profile running", mxp_profile_end);
    ANY("begin (once: the child's own profile)", mxp_profile_begin);
    VAL("none running", 0, mxp_profile_active);
    VAL("none recorded", 0, mxp_profile_count);
    ERR("index -1", mxp_profile_entry_at, -1, &(mxp_profile_entry){ 0 });
    ERR("entry NULL", mxp_profile_entry_at, 0, NULL);
    ERR("machine NULL", mxp_profile_get_machine, NULL);
    ERR("machine struct_size 5", mxp_profile_get_machine, &(mxp_profile_machine){ .struct_size = 5 });
    ERR("FILE NULL", mxp_profile_write, NULL, MXP_PROFILE_TABLE);
    ERR("format 9999", mxp_profile_write, stderr, (mxp_profile_format)9999);
    ERR("path NULL", mxp_profile_save, NULL, MXP_PROFILE_JSON);
    ERR("path a directory", mxp_profile_save, "/tmp", MXP_PROFILE_JSON);
    ERR("format 9999", mxp_profile_save, "/tmp/mxp-hostile-profile.json", (mxp_profile_format)9999);
}
