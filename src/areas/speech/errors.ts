import { AppError } from '../../kernel/errors.js';

export const speechErrors = {
  notFound: () => new AppError('not_found', 'job_not_found', 'No such transcription job.'),
  artifactNotFound: () =>
    new AppError('not_found', 'artifact_not_found', 'No such artifact, or the download address has expired.'),
  tooLarge: (max: number) =>
    new AppError('invalid', 'file_too_large', `file_size_bytes may be at most ${max} bytes (2 GB).`, {
      errors: [{ path: '/body/file_size_bytes', message: `at most ${max}` }],
    }),
  language: (language: string) =>
    new AppError(
      'invalid',
      'invalid_language',
      `language must be auto or an ISO 639-1 code (two letters), not ${language}.`,
      {
        errors: [{ path: '/body/language', message: 'auto or ISO 639-1' }],
      },
    ),
  notUploaded: () =>
    new AppError('invalid', 'file_not_found', 'The file is not in storage: PUT it to upload_url first.'),
  noAudio: (reason: string) => new AppError('invalid', 'no_audio_stream', reason),
  notUploadable: (status: string) =>
    new AppError(
      'invalid',
      'job_not_uploadable',
      `The job is ${status}: its upload address is no longer valid; create a new job.`,
    ),
  notReady: (status: string) =>
    new AppError('invalid', 'job_not_ready', `The job is ${status}; exports are made once it is ready.`),
};
