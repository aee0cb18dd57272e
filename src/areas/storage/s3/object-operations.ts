import * as access from './handlers/access.js';
import * as configuration from './handlers/configuration.js';
import * as multipart from './handlers/multipart.js';
import { getObjectAttributes } from './handlers/object-attributes.js';
import * as objectLock from './handlers/object-lock.js';
import * as objects from './handlers/objects.js';
import { notKept, op, type S3Operation, sub } from './operation-declare.js';

/**
 * The operations on one object (or one upload of it), in the order operations.ts explains: for
 * one method, a sub-resource comes before the plain form.
 */
export const OBJECT_OPERATIONS: readonly S3Operation[] = [
  op('ListParts', 'GET', 'object', 's3:ListMultipartUploadParts', multipart.listParts, sub('uploadId')),
  op(
    'GetObjectTagging',
    'GET',
    'object',
    's3:GetObjectTagging',
    configuration.getObjectTagging,
    sub('tagging'),
  ),
  op(
    'GetObjectRetention',
    'GET',
    'object',
    's3:GetObjectRetention',
    objectLock.getObjectRetention,
    sub('retention'),
  ),
  op(
    'GetObjectLegalHold',
    'GET',
    'object',
    's3:GetObjectLegalHold',
    objectLock.getObjectLegalHold,
    sub('legal-hold'),
  ),
  op('GetObjectAttributes', 'GET', 'object', 's3:GetObject', getObjectAttributes, {
    query: ['attributes'],
    versionAction: 's3:GetObjectVersion',
  }),
  // BitTorrent files are not served: refused, never answered with the object's bytes.
  op(
    'GetObjectTorrent',
    'GET',
    'object',
    's3:GetObject',
    notKept('Fjord does not serve objects over BitTorrent (GetObjectTorrent).'),
    sub('torrent'),
  ),
  op('GetObjectAcl', 'GET', 'object', 's3:GetObjectAcl', access.getObjectAcl, {
    query: ['acl'],
    versionAction: 's3:GetObjectVersionAcl',
  }),
  op('GetObject', 'GET', 'object', 's3:GetObject', objects.getObject, {
    versionAction: 's3:GetObjectVersion',
  }),
  op(
    'GetObjectTorrent',
    'HEAD',
    'object',
    's3:GetObject',
    notKept('Fjord does not serve objects over BitTorrent (GetObjectTorrent).'),
    sub('torrent'),
  ),
  op('HeadObject', 'HEAD', 'object', 's3:GetObject', objects.getObject, {
    versionAction: 's3:GetObjectVersion',
  }),

  op('UploadPart', 'PUT', 'object', 's3:PutObject', multipart.uploadPart, sub('partNumber', 'uploadId')),
  op(
    'PutObjectTagging',
    'PUT',
    'object',
    's3:PutObjectTagging',
    configuration.putObjectTagging,
    sub('tagging'),
  ),
  op(
    'PutObjectRetention',
    'PUT',
    'object',
    's3:PutObjectRetention',
    objectLock.putObjectRetention,
    sub('retention'),
  ),
  op(
    'PutObjectLegalHold',
    'PUT',
    'object',
    's3:PutObjectLegalHold',
    objectLock.putObjectLegalHold,
    sub('legal-hold'),
  ),
  op('PutObjectAcl', 'PUT', 'object', 's3:PutObjectAcl', access.putObjectAcl, {
    query: ['acl'],
    versionAction: 's3:PutObjectVersionAcl',
  }),
  // The copy's source is authorised in the handler (s3:GetObject on it).
  op('CopyObject', 'PUT', 'object', 's3:PutObject', objects.copyObject, { header: 'x-amz-copy-source' }),
  op('PutObject', 'PUT', 'object', 's3:PutObject', objects.putObject),

  op(
    'AbortMultipartUpload',
    'DELETE',
    'object',
    's3:AbortMultipartUpload',
    multipart.abortMultipartUpload,
    sub('uploadId'),
  ),
  op(
    'DeleteObjectTagging',
    'DELETE',
    'object',
    's3:DeleteObjectTagging',
    configuration.deleteObjectTagging,
    sub('tagging'),
  ),
  op('DeleteObject', 'DELETE', 'object', 's3:DeleteObject', objects.deleteObject, {
    versionAction: 's3:DeleteObjectVersion',
  }),

  op(
    'CreateMultipartUpload',
    'POST',
    'object',
    's3:PutObject',
    multipart.createMultipartUpload,
    sub('uploads'),
  ),
  op(
    'CompleteMultipartUpload',
    'POST',
    'object',
    's3:PutObject',
    multipart.completeMultipartUpload,
    sub('uploadId'),
  ),
];
