"""Small synthetic files in each format the readers take (made-up numbers, written here:
the real files are read from ../shared/real-data, see tests/real_data.py)."""
import json

# Model Analyzer metrics-model-inference.csv: rows in throughput order, a trailing blank
# line; config_b (B = 4) still rising +20 % at its last concurrency -> dropped
MODEL_ANALYZER = """Model,Batch,Concurrency,Model Config Path,Instance Group,Max Batch Size,Satisfies Constraints,Throughput (infer/sec),p99 Latency (ms)
m,1,8,m_config_a,1:GPU,2,Yes,200.0,50.0
m,1,4,m_config_a,1:GPU,2,Yes,199.0,25.0
m,1,2,m_config_a,1:GPU,2,Yes,150.0,15.0
m,1,1,m_config_a,1:GPU,2,Yes,100.0,10.0
m,1,8,m_config_b,1:GPU,4,Yes,360.0,30.0
m,1,4,m_config_b,1:GPU,4,Yes,300.0,20.0
m,1,16,m_config_c,1:GPU,8,Yes,500.0,40.0
m,1,32,m_config_c,1:GPU,8,Yes,490.0,80.0
m,1,8,m_config_c,1:GPU,8,Yes,400.0,25.0

"""
MODEL_ANALYZER_GPU = """Model,GPU UUID,Batch,Concurrency,Model Config Path,Instance Group,Satisfies Constraints,GPU Memory Usage (MB),GPU Utilization (%),GPU Power Usage (W)
m,GPU-1,1,8,m_config_a,1:GPU,Yes,1000.0,90.0,40.0
m,GPU-1,1,4,m_config_a,1:GPU,Yes,1000.0,90.0,41.0
m,GPU-1,1,16,m_config_c,1:GPU,Yes,1000.0,90.0,60.0
"""
PERF_ANALYZER = """Concurrency,Inferences/Second,Client Send,Network+Server Send/Recv,Server Queue,Server Compute Input,Server Compute Infer,Server Compute Output,Client Recv,p50 latency,p90 latency,p95 latency,p99 latency
4,800.0,50,1000,500,100,2300,50,0,5000,5500,5800,6000
1,250.0,50,900,100,100,2800,50,0,4000,4200,4300,4500
2,450.0,50,950,200,100,3100,50,0,4400,4700,4800,5000
"""
DLE_BATCH = """gpu,table,batch_size,throughput_avg_img_per_s,latency_avg_ms,latency_p95_ms,latency_p99_ms
GPU A,FP32 Inference Latency,1,100,10.0,10.5,11.0
GPU A,FP32 Inference Latency,2,190,10.5,11.0,11.5
GPU A,FP32 Inference Latency,4,350,11.4,12.0,12.5
GPU B,AMP Inference Latency,1,150,6.7,7.0,7.5
GPU B,AMP Inference Latency,8,900,8.9,9.5,9.9
"""
TRITON_OFFLINE = """scenario,gpu,backend,backend_accelerator,precision,model_format,max_batch_size,model_instances,client_batch_size,inferences_per_second,p90_latency_ms,p95_latency_ms,p99_latency_ms,avg_latency_ms
offline,GPU A,ONNX Runtime,TensorRT,FP16,ONNX,64,1,1,400,2.6,2.7,2.8,2.5
offline,GPU A,ONNX Runtime,TensorRT,FP16,ONNX,64,1,4,1000,4.1,4.2,4.3,4.0
offline,GPU A,ONNX Runtime,TensorRT,FP16,ONNX,64,1,16,2000,8.2,8.3,8.4,8.0
offline,GPU B,ONNX Runtime,-,FP16,ONNX,64,1,1,200,5.1,5.2,5.3,5.0
offline,GPU B,ONNX Runtime,-,FP16,ONNX,64,1,8,800,10.1,10.2,10.3,10.0
"""
TRITON_ONLINE = """scenario,gpu,backend,backend_accelerator,precision,model_format,max_batch_size,model_instances,concurrent_client_requests,inferences_per_second,client_send_ms,network_server_send_recv_ms,server_queue_ms,server_compute_input_ms,server_compute_infer_ms,server_compute_output_ms,client_recv_ms,p50_latency_ms,p90_latency_ms,p95_latency_ms,p99_latency_ms,avg_latency_ms
online,GPU A,ONNX Runtime,TensorRT,FP16,ONNX,64,2,32,4000,0.1,2.0,2.0,0.5,3.3,0.1,0,7.9,8.5,9.0,9.5,8.0
online,GPU A,ONNX Runtime,TensorRT,FP16,ONNX,64,2,16,3200,0.1,1.5,1.0,0.3,2.0,0.1,0,5.0,5.5,6.0,6.5,5.0
"""
PLAIN_PROFILE = """batch_size,throughput_per_s,power_w
4,1000,200
1,400,150
16,2000,250
"""
AZURE = ("TIMESTAMP,ContextTokens,GeneratedTokens\r\n"
         "2024-01-01 00:00:00.1234567,100,10\r\n"
         "2024-01-01 00:00:00.1234568,200,20\r\n"
         "2024-01-01 00:00:02.0000000,300,30")
MOONCAKE = "\n".join(json.dumps(r) for r in (
    {"timestamp": 0, "input_length": 500, "output_length": 20, "hash_ids": [1, 2]},
    {"timestamp": 0, "input_length": 600, "output_length": 30, "hash_ids": [1]},
    {"timestamp": 3000, "input_length": 700, "output_length": 40, "hash_ids": []})) + "\n"
PLAIN_TRACE = """timestamp_s,input_tokens,output_tokens
2.0,30,3
1.0,10,1
1.5,20,2
"""
VLLM = json.dumps({
    "date": "20250101-000000", "endpoint_type": "openai", "label": None, "model_id": "m",
    "num_prompts": 4, "request_rate": "inf", "burstiness": 1.0, "max_concurrency": 2,
    "duration": 10.0, "completed": 4, "total_input_tokens": 4000, "total_output_tokens": 400,
    "request_throughput": 0.4, "request_goodput": None, "output_throughput": 40.0,
    "mean_ttft_ms": 100.0, "median_ttft_ms": 90.0, "std_ttft_ms": 10.0, "p99_ttft_ms": 130.0,
    "mean_tpot_ms": 20.0, "median_tpot_ms": 19.0, "std_tpot_ms": 1.0, "p99_tpot_ms": 23.0,
    "mean_itl_ms": 20.0, "median_itl_ms": 19.5, "std_itl_ms": 2.0, "p99_itl_ms": 30.0})

# reader name -> the samples it reads
PROFILE_SAMPLES = {"model_analyzer": MODEL_ANALYZER, "perf_analyzer": PERF_ANALYZER,
                   "dle_batch_table": DLE_BATCH, "triton_dle_table": TRITON_OFFLINE,
                   "plain_csv": PLAIN_PROFILE}
SWEEP_SAMPLES = {"triton_dle_table": TRITON_ONLINE, "perf_analyzer": PERF_ANALYZER,
                 "model_analyzer": MODEL_ANALYZER}
TRACE_SAMPLES = {"azure_llm_csv": AZURE, "mooncake_jsonl": MOONCAKE, "plain_csv": PLAIN_TRACE}
